import { ApiFailure, type ApiHandlers } from '../api/server';
import type { HomingConfig } from '../homing-config';
import type { SecretStore } from '../secrets/secret-store';
import { testConnection } from './connection-test';
import type { PlatformManager } from './manager';

type PlatformHandlers = Pick<ApiHandlers, 'listPlatforms' | 'reconnectPlatform' | 'testConnection'>;

/** The API's methods for the platforms: their cards, a reconnect, and "Test connection" with settings not saved yet. */
export function platformApiHandlers(deps: {
  readonly platforms: Pick<PlatformManager, 'list' | 'reconnect' | 'status'>;
  readonly secrets: SecretStore;
  readonly env: NodeJS.ProcessEnv;
  /** The config in force: a saved secret is tested only against the server it was saved for. */
  readonly savedConfig: () => HomingConfig;
}): PlatformHandlers {
  return {
    listPlatforms: () => deps.platforms.list(),
    reconnectPlatform: async ({ name }) => {
      if (!(await deps.platforms.reconnect(name))) throw new ApiFailure('not-found', `no platform named ${name} is configured`);
      return deps.platforms.status(name)!;
    },
    testConnection: ({ target, config }) => {
      const saved = deps.savedConfig();
      return testConnection(target, config, { secrets: deps.secrets, env: deps.env, savedAgent: saved.agent, savedConfig: saved });
    },
  };
}
