import type { ApiHandlers } from '../api/server';
import type { SecretStore } from './secret-store';

type SecretHandlers = Pick<ApiHandlers, 'setSecret'>;

/** The API's method for secrets: saved (or removed) here, then the adapters using them restart with the new value. */
export function secretApiHandlers(deps: { readonly secrets: SecretStore; readonly applied: () => Promise<void> }): SecretHandlers {
  return {
    setSecret: async ({ name, value }) => {
      if (value === null) deps.secrets.delete(name);
      else deps.secrets.set(name, value);
      await deps.applied();
      return { secretsSet: deps.secrets.names() };
    },
  };
}
