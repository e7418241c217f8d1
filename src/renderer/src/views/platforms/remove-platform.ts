import type { HomingApi } from '../../../../shared/api';
import { platformInfo, type SecretName } from '../../../../shared/platforms';
import { explainApiError, platformLabel } from '../../plain-words';

/**
 * Takes a platform off the list: its section leaves config.json (the gateway
 * disconnects it), then its secrets leave the secret store, so nothing of it
 * stays behind. The config goes first: a secret removed while the platform
 * still ran would restart it without one. Conversations, deliveries and
 * pairing decisions stay, as history. `removed`: whether config.json lost the
 * section; `problem`: what went wrong, if anything did.
 */
export async function removePlatform(
  api: Pick<HomingApi, 'setConfig' | 'setSecret'>,
  written: unknown,
  name: string,
  secretsSet: readonly string[],
): Promise<{ readonly removed: boolean; readonly problem: string | null }> {
  const result = await api.setConfig({ config: withoutPlatform(written, name) });
  const label = platformInfo(name)?.label ?? name;
  if (!result.ok) {
    const reason = result.error.code === 'conflict' ? `Could not remove ${label}: ${result.error.message}.` : explainApiError(`remove ${label}`, result.error);
    return { removed: false, problem: reason };
  }
  const secrets = (platformInfo(name)?.secrets ?? []).filter((secret) => secretsSet.includes(secret)) as SecretName[];
  for (const secret of secrets) {
    const cleared = await api.setSecret({ name: secret, value: null });
    if (!cleared.ok) return { removed: true, problem: `${label} is removed, but the secret store still holds ${secret}. ${explainApiError(`remove ${secret}`, cleared.error)}` };
  }
  return { removed: true, problem: null };
}

/** config.json without the platform's section (and without an empty `platforms`). */
export function withoutPlatform(written: unknown, name: string): Record<string, unknown> {
  const config = structuredClone((written ?? {}) as Record<string, unknown>);
  const platforms = { ...((config.platforms ?? {}) as Record<string, unknown>) };
  delete platforms[name];
  if (Object.keys(platforms).length === 0) delete config.platforms;
  else config.platforms = platforms;
  return config;
}

/** What the confirmation says will go, and what stays. */
export function removalWords(name: string): string {
  const place = platformLabel(name);
  return (
    `Homing disconnects from ${place} and forgets its settings and what the secret store holds for it. ` +
    `Conversations and delivery history stay; replies still owed on ${place} wait until you add it again (or discard them in Deliveries).`
  );
}
