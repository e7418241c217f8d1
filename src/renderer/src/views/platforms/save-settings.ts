import type { ApiError, HomingApi } from '../../../../shared/api';
import type { SecretName } from '../../../../shared/platforms';
import { explainApiError } from '../../plain-words';

/** A secret typed into a form, waiting for its Save: it goes to the secret store, never into config.json. */
export interface TypedSecret {
  readonly name: SecretName;
  /** Its name in a sentence ("Bot token"). */
  readonly label: string;
  readonly value: string;
}

/**
 * What one Save did. The config is written first and the secrets after it, so a
 * config the gateway refuses (the usual mistake: a field mistyped) stores
 * nothing, and the typed secret stays in the form for the next try.
 */
export type SaveOutcome =
  /** The config (when it changed) and every typed secret are kept. */
  | { readonly kind: 'saved'; readonly stored: readonly StoredSecret[] }
  /** The config was refused: nothing was written, no secret stored. */
  | { readonly kind: 'refused'; readonly error: ApiError }
  /** A secret could not be stored; the config was written (`configWritten`) and the secrets in `stored` were kept. */
  | { readonly kind: 'secret-failed'; readonly failed: StoredSecret; readonly error: ApiError; readonly stored: readonly StoredSecret[]; readonly configWritten: boolean };

/** A secret by name and label, without its value. */
export interface StoredSecret {
  readonly name: SecretName;
  readonly label: string;
}

/**
 * One Save of a settings form: `config` to config.json (null when the form
 * changed nothing in it: a secret alone is then stored even while config.json
 * has an error), then each typed secret to the secret store, in order, stopping
 * at the first that fails.
 */
export async function saveSettings(api: Pick<HomingApi, 'setConfig' | 'setSecret'>, config: Record<string, unknown> | null, secrets: readonly TypedSecret[]): Promise<SaveOutcome> {
  if (config !== null) {
    const result = await api.setConfig({ config });
    if (!result.ok) return { kind: 'refused', error: result.error };
  }
  const stored: StoredSecret[] = [];
  for (const { name, label, value } of secrets) {
    const result = await api.setSecret({ name, value });
    if (!result.ok) return { kind: 'secret-failed', failed: { name, label }, error: result.error, stored, configWritten: config !== null };
    stored.push({ name, label });
  }
  return { kind: 'saved', stored };
}

/**
 * What the form says after a Save that was not refused; `ok` false unless
 * everything was kept. `closing` ends the sentence (by default, that the
 * gateway applies it now).
 */
export function saveMessage(outcome: Exclude<SaveOutcome, { kind: 'refused' }>, closing?: string): { text: string; ok: boolean } {
  switch (outcome.kind) {
    case 'saved':
      return { text: `Saved.${keptLine(outcome.stored)} ${closing ?? 'Homing applies it now.'}`, ok: true };
    case 'secret-failed': {
      // Never "Saved": what the form shows is not all kept.
      const others = outcome.configWritten ? ' The other settings are saved.' : '';
      return { text: `${explainApiError(`store ${outcome.failed.label}`, outcome.error)}${keptLine(outcome.stored)}${others}${closing ? ` ${closing}` : ''}`, ok: false };
    }
  }
}

/** " Bot token is in the secret store." — never the value, and never config.json. */
function keptLine(secrets: readonly StoredSecret[]): string {
  const labels = secrets.map((secret) => secret.label);
  if (labels.length === 0) return '';
  const names = labels.length === 1 ? labels[0] : `${labels.slice(0, -1).join(', ')} and ${labels.at(-1)}`;
  return ` ${names} ${labels.length === 1 ? 'is' : 'are'} in the secret store.`;
}

/** A secret's label as a name in a sentence: "Password (if no access token)" is "Password". */
export function secretWords(label: string): string {
  return label.replace(/\s*\([^)]*\)$/, '');
}
