/**
 * The gateway process's SecretStore when the tray app holds the secrets in
 * safeStorage (see safe-secrets.ts): the values arrive from the main process
 * over the parent port, live only in memory, and every change is posted back
 * to be encrypted and written there.
 */
import { SECRET_NAMES, type SecretName, type SecretStore } from './gateway/secrets/secret-store';

/** Parent-port messages about secrets. */
export type SecretsMessage =
  | { readonly type: 'secrets'; readonly values: Partial<Record<SecretName, string>> }
  | { readonly type: 'secret-changed'; readonly name: SecretName; readonly value: string | null };

export class ParentSecretStore implements SecretStore {
  private values: Partial<Record<SecretName, string>>;

  constructor(
    values: Partial<Record<string, unknown>>,
    private readonly post: (message: SecretsMessage) => void,
  ) {
    this.values = {};
    for (const name of SECRET_NAMES) {
      const value = values[name];
      if (typeof value === 'string') this.values[name] = value;
    }
  }

  get(name: SecretName): string | undefined {
    return this.values[name];
  }

  set(name: SecretName, value: string): void {
    this.values = { ...this.values, [name]: value };
    this.post({ type: 'secret-changed', name, value });
  }

  delete(name: SecretName): void {
    const { [name]: _removed, ...rest } = this.values;
    this.values = rest;
    this.post({ type: 'secret-changed', name, value: null });
  }

  names(): SecretName[] {
    return SECRET_NAMES.filter((name) => this.values[name] !== undefined);
  }
}

export function isSecretChange(message: unknown): message is Extract<SecretsMessage, { type: 'secret-changed' }> {
  if (typeof message !== 'object' || message === null) return false;
  const { type, name, value } = message as Record<string, unknown>;
  return type === 'secret-changed' && SECRET_NAMES.includes(name as SecretName) && (typeof value === 'string' || value === null);
}
