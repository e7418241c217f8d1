import { useEffect, useMemo, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { formFields, type FormDescription, type FormField, type FormPart } from '../../../../shared/platform-forms';
import type { PlatformInfo, PlatformName, SecretName } from '../../../../shared/platforms';
import { FormMessage } from './FormMessage';
import { fieldId, formValues, platformSection, sectionToWrite, sectionWith, type FormValues } from './form-values';
import { isConfigured } from './platform-list';
import { useFocusOnOpen } from './form-focus';
import { secretWords, type StoredSecret, type TypedSecret } from './save-settings';
import { SecretField } from './SecretField';
import { useSettingsForm } from './useSettingsForm';

interface PlatformFormProps {
  readonly api: HomingApi;
  readonly view: ConfigView;
  readonly platform: PlatformInfo & { readonly name: PlatformName };
  readonly onSaved: () => void;
  /** Closes the form (Cancel, for a platform not added yet). */
  readonly onClose: () => void;
}

/**
 * Add or edit a platform, from its form's description (src/shared/platform-forms.ts):
 * one Save writes what changed to config.json (checked by the gateway against
 * its schema, which names the field at fault) and the secrets typed to the
 * secret store; Test connection tries the settings as typed, before they are
 * saved. A platform not in config.json yet is being added: its form has no
 * "Connect to …" box (saving it connects it), and shows nothing as connected.
 */
export function PlatformForm({ api, view, platform, onSaved, onClose }: PlatformFormProps) {
  const { name, label, form: description } = platform;
  const adding = !isConfigured(view.config, name);
  const inForce = platformSection(view.config, name);
  // Only a change of the section in force resets the form: clearing a secret reloads the config, and must not wipe what is being typed.
  const saved = JSON.stringify(inForce);
  const shown = useMemo(() => formValues(description, JSON.parse(saved) as Record<string, unknown>), [description, saved]);
  const [values, setValues] = useState<FormValues>(shown);
  useEffect(() => setValues(shown), [shown]);
  const [secrets, setSecrets] = useState<Readonly<Record<string, string>>>({});
  const labels = useMemo(() => fieldLabels(description), [description]);
  // Saves patch config.json's own contents, never the defaults filled in.
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null, { path: `platforms.${name}`, labels });
  const set = (id: string, value: string | boolean) => setValues((previous) => ({ ...previous, [id]: value }));
  const typed = typedSecrets(description, secrets);
  const formRef = useFocusOnOpen();

  const field = (each: FormField) => (
    <Field key={fieldId(each)} field={each} values={values} invalid={form.invalidField === each.key} onChange={(value) => set(fieldId(each), value)} />
  );
  const part = (each: FormPart, index: number) => {
    switch (each.part) {
      case 'note':
        return (
          <p key={index} className="muted">
            {each.text}
          </p>
        );
      case 'field':
        // Adding a platform is connecting it: the box appears once it is in config.json.
        if (adding && each.field.key === 'enabled') return null;
        return field(each.field);
      case 'grid':
        return each.legend ? (
          <fieldset key={index} className="grid">
            <legend>{each.legend}</legend>
            {each.fields.map(field)}
          </fieldset>
        ) : (
          <div key={index} className="grid">
            {each.fields.map(field)}
          </div>
        );
      case 'secret':
        // One of the platform's `secrets` (form-values.test.ts checks it).
        return (
          <SecretField
            key={each.name}
            api={api}
            name={each.name as SecretName}
            label={each.label}
            isSet={view.secretsSet.includes(each.name)}
            value={secrets[each.name] ?? ''}
            onChange={(value) => setSecrets((previous) => ({ ...previous, [each.name]: value }))}
            onCleared={onSaved}
          />
        );
    }
  };

  return (
    <form
      ref={formRef}
      className="settings"
      aria-labelledby={`${name}-form-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void form
          .save(
            (current) => ({ ...current, platforms: { ...(current.platforms as object), [name]: sectionToWrite(description, values, shown, platformSection(current, name)) } }),
            typed,
          )
          .then((stored) => {
            if (stored === null) return;
            setSecrets((previous) => withoutStored(previous, stored));
            onSaved();
          });
      }}
    >
      <h4 id={`${name}-form-title`} className="visually-hidden">
        {`${label} settings`}
      </h4>
      {description.parts.map(part)}
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          {`Save ${label}`}
        </button>
        <button type="button" disabled={form.busy} onClick={() => void form.test(name, sectionWith(description, values, inForce))}>
          Test connection
        </button>
        <button type="button" onClick={onClose}>
          {adding ? 'Cancel' : 'Close'}
        </button>
      </div>
      {typed.length > 0 && <p className="muted">Test connection uses what the secret store holds: save to test what you typed.</p>}
      <FormMessage
        form={form}
        testId={`${name}-form-message`}
        path={view.path}
        onReplaced={(stored) => {
          setSecrets((previous) => withoutStored(previous, stored));
          onSaved();
        }}
      />
    </form>
  );
}

/** The secrets typed into the form, in its order, with their labels. */
function typedSecrets(description: FormDescription, secrets: Readonly<Record<string, string>>): TypedSecret[] {
  return description.parts.flatMap((part) =>
    part.part === 'secret' && (secrets[part.name] ?? '') !== '' ? [{ name: part.name as SecretName, label: secretWords(part.label), value: secrets[part.name]! }] : [],
  );
}

function withoutStored(secrets: Readonly<Record<string, string>>, stored: readonly StoredSecret[]): Record<string, string> {
  return Object.fromEntries(Object.entries(secrets).filter(([name]) => !stored.some((secret) => secret.name === name)));
}

/** The fields' labels by key, for naming the one a schema error is about (of two fields sharing a key, the first). */
function fieldLabels(description: FormDescription): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const field of formFields(description)) labels[field.key] ??= field.label;
  return labels;
}

interface FieldProps {
  readonly field: FormField;
  readonly values: FormValues;
  readonly invalid: boolean;
  readonly onChange: (value: string | boolean) => void;
}

/** One field, labelled; marked when the gateway named it as wrong. */
function Field({ field, values, invalid, onChange }: FieldProps) {
  const value = values[fieldId(field)];
  if (field.kind === 'checkbox') {
    return (
      <label className="check">
        <input type="checkbox" checked={value === true} aria-invalid={invalid || undefined} onChange={(event) => onChange(event.target.checked)} /> {field.label}
      </label>
    );
  }
  const help = field.help && <span className="muted">{field.help}</span>;
  if (field.kind === 'select') {
    return (
      <label>
        {field.label}
        <select value={String(value)} aria-invalid={invalid || undefined} onChange={(event) => onChange(event.target.value)}>
          {field.options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
        {help}
      </label>
    );
  }
  // A port's default follows another field (a mail server's encryption).
  const placeholder = field.kind === 'port' && field.placeholderAfter ? field.placeholderAfter.values[String(values[field.placeholderAfter.key])] : field.placeholder;
  return (
    <label>
      {field.label}
      <input
        value={String(value)}
        aria-invalid={invalid || undefined}
        inputMode={field.kind === 'port' ? 'numeric' : undefined}
        autoComplete={field.kind === 'text' ? field.autoComplete : undefined}
        onChange={(event) => onChange(event.target.value)}
        placeholder={placeholder}
      />
      {help}
    </label>
  );
}
