import { useEffect, useMemo, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { formFields, type FormDescription, type FormField, type FormPart } from '../../../../shared/platform-forms';
import type { PlatformInfo, PlatformName, SecretName } from '../../../../shared/platforms';
import { FormMessage } from './FormMessage';
import { fieldId, formValues, platformSection, sectionToWrite, sectionWith, type FormValues } from './form-values';
import { SecretField } from './SecretField';
import { useSettingsForm } from './useSettingsForm';

interface PlatformFormProps {
  readonly api: HomingApi;
  readonly view: ConfigView;
  readonly platform: PlatformInfo & { readonly name: PlatformName };
  readonly onSaved: () => void;
}

/**
 * Add or edit a platform, from its form's description (src/shared/platform-forms.ts):
 * secrets go to the secret store, Save writes what changed to config.json (checked
 * by the gateway against its schema, which names the field at fault), and Test
 * connection tries the settings as typed, before they are saved.
 */
export function PlatformForm({ api, view, platform, onSaved }: PlatformFormProps) {
  const { name, label, form: description } = platform;
  const inForce = platformSection(view.config, name);
  // Only a change of the section in force resets the form: storing a secret reloads the config, and must not wipe what is being typed.
  const saved = JSON.stringify(inForce);
  const shown = useMemo(() => formValues(description, JSON.parse(saved) as Record<string, unknown>), [description, saved]);
  const [values, setValues] = useState<FormValues>(shown);
  useEffect(() => setValues(shown), [shown]);
  const labels = useMemo(() => fieldLabels(description), [description]);
  // Saves patch config.json's own contents, never the defaults filled in.
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null, { path: `platforms.${name}`, labels });
  const set = (id: string, value: string | boolean) => setValues((previous) => ({ ...previous, [id]: value }));

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
        // One of the platform's `secrets` (platform-forms.test.ts checks it).
        return <SecretField key={each.name} api={api} name={each.name as SecretName} label={each.label} isSet={view.secretsSet.includes(each.name)} onChanged={onSaved} />;
    }
  };

  return (
    <form
      className="card settings"
      aria-labelledby={`${name}-form-title`}
      onSubmit={(event) => {
        event.preventDefault();
        void form
          .save((current) => ({ ...current, platforms: { ...(current.platforms as object), [name]: sectionToWrite(description, values, shown, platformSection(current, name)) } }))
          .then((ok) => ok && onSaved());
      }}
    >
      <h3 id={`${name}-form-title`}>{label}</h3>
      {description.parts.map(part)}
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          {`Save ${label}`}
        </button>
        <button type="button" disabled={form.busy} onClick={() => void form.test(name, sectionWith(description, values, inForce))}>
          Test connection
        </button>
      </div>
      <FormMessage form={form} testId={`${name}-form-message`} path={view.path} onReplaced={onSaved} />
    </form>
  );
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
