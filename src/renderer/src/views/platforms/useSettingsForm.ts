import { useState } from 'react';
import type { ConnectionTarget, ConnectionTestResult, HomingApi } from '../../../../shared/api';
import { useOnline } from '../../connection';
import { explainApiError } from '../../plain-words';
import { saveMessage, saveSettings, type StoredSecret, type TypedSecret } from './save-settings';

export interface SettingsForm {
  readonly message: { readonly text: string; readonly ok: boolean } | null;
  readonly busy: boolean;
  /**
   * Set when a save was refused because config.json has an error (hand edits
   * the window would overwrite): the config it tried to save, which `replace`
   * writes after backing the file up.
   */
  readonly refusedForFile: Record<string, unknown> | null;
  /** The field the gateway named as wrong (`nick`, `imap.port`, `baseUrl`…), by its key, for the form to mark; null when none. */
  readonly invalidField: string | null;
  /**
   * One Save: the config `patch` makes (validated by the gateway with
   * config.json's schema), then the secrets typed into the form, to the secret
   * store. Resolves to the secrets kept (the form empties their fields), or
   * null when the config was refused and nothing was kept.
   */
  save(patch: (config: Record<string, unknown>) => Record<string, unknown>, secrets?: readonly TypedSecret[]): Promise<readonly StoredSecret[] | null>;
  /** Replaces the broken config.json with what `save` tried to write, keeping a timestamped backup, then stores the secrets that save held back. */
  replace(): Promise<readonly StoredSecret[] | null>;
  test(target: ConnectionTarget, config: Record<string, unknown>): Promise<void>;
  setMessage(message: { text: string; ok: boolean } | null): void;
}

/** Where a form's fields live in config.json, for naming the one a schema error is about. */
export interface FormSection {
  /** `platforms.irc`, `agent`. */
  readonly path: string;
  /** Each field's label, by its key in the section. */
  readonly labels: Readonly<Record<string, string>>;
}

/** Save and "test connection" for a settings form; the gateway's answer is shown at the form. */
export function useSettingsForm(api: HomingApi, current: () => Record<string, unknown>, fileHasError: boolean, section: FormSection): SettingsForm {
  const [message, setMessage] = useState<{ text: string; ok: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<{ config: Record<string, unknown>; secrets: readonly TypedSecret[] } | null>(null);
  const [invalidField, setInvalid] = useState<string | null>(null);
  const online = useOnline();
  return {
    message,
    // Save and Test need the gateway: while it is away the forms' buttons are off.
    busy: busy || !online,
    refusedForFile: refused?.config ?? null,
    invalidField,
    setMessage,
    async save(patch, secrets = []) {
      setBusy(true);
      const before = current();
      const config = patch(before);
      // A secret alone changes nothing in config.json: it is stored even while the file has an error.
      const unchanged = secrets.length > 0 && JSON.stringify(config) === JSON.stringify(before);
      const outcome = await saveSettings(api, unchanged ? null : config, secrets);
      setBusy(false);
      if (outcome.kind === 'refused') {
        const conflict = outcome.error.code === 'conflict';
        // The file on disk has an error (the window may not have seen it yet: the gateway polls every 2 s).
        const forFile = conflict && (fileHasError || /has an error/.test(outcome.error.message));
        setRefused(forFile ? { config, secrets } : null);
        const field = conflict ? null : fieldAtFault(outcome.error.message, section.path, section.labels);
        setInvalid(field?.name ?? null);
        setMessage({
          text: conflict ? `Not saved: ${fileProblem(outcome.error.message)}` : field ? `Not saved: ${field.words}` : explainApiError('save', outcome.error),
          ok: false,
        });
        return null;
      }
      setRefused(null);
      setInvalid(null);
      setMessage(saveMessage(outcome));
      return outcome.stored;
    },
    async replace() {
      if (!refused) return null;
      setBusy(true);
      const result = await api.replaceConfig({ config: refused.config });
      if (!result.ok) {
        setBusy(false);
        setMessage({ text: explainApiError('replace config.json', result.error), ok: false });
        return null;
      }
      const outcome = await saveSettings(api, null, refused.secrets);
      setBusy(false);
      setRefused(null);
      const backup = result.value.backup ?? '(there was none)';
      // With no config to write, saveSettings cannot be refused; only a secret can fail.
      if (outcome.kind === 'refused') return null;
      setMessage(saveMessage(outcome, outcome.kind === 'saved' ? `The old file is kept as ${backup}.` : `config.json is replaced; the old file is kept as ${backup}.`));
      return outcome.stored;
    },
    async test(target, config) {
      setBusy(true);
      setMessage({ text: 'Testing…', ok: true });
      const result = await api.testConnection({ target, config });
      setBusy(false);
      const outcome: ConnectionTestResult = result.ok ? result.value : { ok: false, message: explainApiError('test', result.error) };
      const field = outcome.ok ? null : fieldAtFault(outcome.message, section.path, section.labels);
      setInvalid(field?.name ?? null);
      setMessage({ text: field ? field.words : plainConnectionError(outcome.message), ok: outcome.ok });
    },
  };
}

/**
 * The field a schema error names ("config: platforms.irc.nick: must be an IRC nick …"),
 * and the sentence to show: the field's label first, its config path after.
 * `section` is the form's part of the config (`platforms.irc`, `agent`); `labels`
 * its fields' labels by key (`nick`, `imap.host`). A path inside a field (a list's
 * entry, an id's settings) names that field.
 */
export function fieldAtFault(message: string, section: string, labels: Readonly<Record<string, string>>): { name: string; words: string } | null {
  const match = new RegExp(`(?:^|\\s)(${section.replace(/\./g, '\\.')}\\.([^\\s:]+)):\\s*(.+)$`).exec(message);
  if (!match) return null;
  const [, path, inside, problem] = match;
  const name = Object.keys(labels)
    .filter((key) => inside === key || inside!.startsWith(`${key}.`) || inside!.startsWith(`${key}[`))
    .sort((a, b) => b.length - a.length)[0] ?? inside!.split(/[.[]/)[0]!;
  // "Who may talk to the agent (nicks)" reads as "Who may talk to the agent" in a sentence.
  const label = labels[name]?.replace(/\s*\([^)]*\)$/, '') ?? name;
  const words = problem!.replace(/^Invalid input: expected (\w+), received (\w+)$/, 'must be a $1, not a $2').replace(/^Too big: expected .* to have <=(\d+) characters$/, 'at most $1 characters');
  return { name, words: `${label} ${words.replace(/\.$/, '')} (${path}).` };
}

/** "connect ECONNREFUSED 127.0.0.1:6667" and friends, in words. */
function plainConnectionError(message: string): string {
  return message
    .replace(/connect ECONNREFUSED ([\w.:[\]-]+)/, 'nothing answers at $1 (is the server running, and is the port right?)')
    .replace(/getaddrinfo ENOTFOUND ([\w.-]+)/, 'the server name $1 does not exist (a typo, or no network)')
    .replace(/\bETIMEDOUT\b/, 'the server took too long to answer');
}

/** The gateway's refusal without its "not saved:" lead (the form says that itself). */
function fileProblem(message: string): string {
  return message.replace(/^not saved:\s*/, '');
}
