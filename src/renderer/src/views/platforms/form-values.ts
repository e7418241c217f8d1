import { formFields, type FormDescription, type FormField, type IdsField } from '../../../../shared/platform-forms';

/**
 * A platform form's values as typed (text, or a checkbox's state), by field id,
 * and how they go to and from config.json's `platforms.<name>` section.
 */
export type FormValues = Readonly<Record<string, string | boolean>>;

type Section = Record<string, unknown>;

/** A field's id in the form: its key, and which half of a split object it shows (Discord's two channel lists share `channels`). */
export function fieldId(field: FormField): string {
  return field.kind === 'ids' && field.answers ? `${field.key}:${field.answers}` : field.key;
}

/** The platform's section of a whole config (`{}` when it has none). */
export function platformSection(config: unknown, name: string): Section {
  const platforms = ((config ?? {}) as Section).platforms as Section | undefined;
  return (platforms?.[name] ?? {}) as Section;
}

/** What the form shows for a section. */
export function formValues(form: FormDescription, section: Section): FormValues {
  return Object.fromEntries(formFields(form).map((field) => [fieldId(field), shown(field, valueAt(section, field.key))]));
}

/** The section with every field's value: what Test connection tries (`base` being the section in force). */
export function sectionWith(form: FormDescription, values: FormValues, base: Section): Section {
  const section = structuredClone(base);
  for (const field of formFields(form)) {
    setValueAt(section, field.key, written(field, values[fieldId(field)]!, valueAt(section, field.key), valueAt(base, field.key)));
  }
  return section;
}

/**
 * The section to save: `written` (what config.json itself says) with the
 * fields the user changed from what was `shown`. A field left as shown is not
 * written unless the file has it already or the schema requires it, so defaults
 * stay implicit; what the form does not show is kept.
 */
export function sectionToWrite(form: FormDescription, values: FormValues, shownValues: FormValues, written: Section): Section {
  const now = sectionWith(form, values, written);
  const before = sectionWith(form, shownValues, written);
  const section = structuredClone(written);
  for (const field of formFields(form)) {
    const value = valueAt(now, field.key);
    const changed = JSON.stringify(value) !== JSON.stringify(valueAt(before, field.key));
    if (changed || field.required || valueAt(written, field.key) !== undefined) setValueAt(section, field.key, value);
  }
  return section;
}

/** One line of ids or names, separated by commas or spaces. */
function list(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

function shown(field: FormField, value: unknown): string | boolean {
  switch (field.kind) {
    case 'checkbox':
      return typeof value === 'boolean' ? value : field.initial;
    case 'text':
      return value === undefined ? (field.initial ?? '') : String(value);
    case 'port':
      return value === undefined ? (field.initial === undefined ? '' : String(field.initial)) : String(value);
    case 'select':
      return value === undefined ? field.initial : String(value);
    case 'list':
      // A single string counts as a list of one (`trustedAuthServId` may be either).
      return [value ?? []]
        .flat()
        .filter((entry) => typeof entry !== 'object')
        .map(String)
        .join(', ');
    case 'ids':
      return Object.entries(places(value))
        .filter(([, entry]) => inHalf(field, entry))
        .map(([id]) => id)
        .join(', ');
  }
}

/** A field's config value from what was typed; undefined leaves the key out. `current` is the value so far, `previous` the one before the form. */
function written(field: FormField, typed: string | boolean, current: unknown, previous: unknown): unknown {
  if (field.kind === 'checkbox') return typed === true;
  const text = String(typed).trim();
  switch (field.kind) {
    case 'text':
      return field.optional && text === '' ? undefined : text;
    case 'port':
      // Not a number: sent as typed, so the schema names the mistake.
      return text === '' ? undefined : /^\d+$/.test(text) ? Number(text) : text;
    case 'select':
      return text;
    case 'list': {
      // Entries the form does not show (IRC's `{ nick, account }`) are kept as they were.
      const kept = [previous ?? []].flat().filter((entry) => typeof entry === 'object');
      const entries = [...list(text), ...kept];
      return field.optional && entries.length === 0 ? undefined : entries;
    }
    case 'ids': {
      const before = places(previous);
      const otherHalf = Object.entries(places(current)).filter(([, entry]) => !inHalf(field, entry));
      return Object.fromEntries([...otherHalf, ...list(text).map((id) => [id, placeSettings(field, before[id])] as const)]);
    }
  }
}

function places(value: unknown): Record<string, Section | undefined> {
  return (value ?? {}) as Record<string, Section | undefined>;
}

/** Whether an entry belongs to the field's half of a split object (any entry, when it is not split). */
function inHalf(field: IdsField, entry: Section | undefined): boolean {
  if (!field.answers) return true;
  return (entry?.requireMention === false) === (field.answers === 'every-message');
}

/** An id's own settings, kept; in a split object, its `requireMention` set by the half it is listed in. */
function placeSettings(field: IdsField, before: Section | undefined): Section {
  if (!field.answers) return before ?? {};
  const { requireMention: _old, ...rest } = before ?? {};
  return field.answers === 'every-message' ? { ...rest, requireMention: false } : rest;
}

function valueAt(section: Section, key: string): unknown {
  return key.split('.').reduce<unknown>((value, name) => (value as Section | undefined)?.[name], section);
}

/** Sets a (dotted) key, making the objects on its way; undefined deletes it (and makes none). */
function setValueAt(section: Section, key: string, value: unknown): void {
  const names = key.split('.');
  const last = names.pop()!;
  let object = section;
  for (const name of names) {
    if (typeof object[name] !== 'object' || object[name] === null) {
      if (value === undefined) return;
      object[name] = {};
    }
    object = object[name] as Section;
  }
  if (value === undefined) delete object[last];
  else object[last] = value;
}
