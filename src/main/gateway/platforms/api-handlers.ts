import { ApiFailure, type ApiHandlers } from '../api/server';
import type { HomingConfig } from '../homing-config';
import type { SecretStore } from '../secrets/secret-store';
import { findAgentServers } from '../agents/discovery';
import { testConnection } from './connection-test';
import type { PlatformManager } from './manager';

type PlatformHandlers = Pick<ApiHandlers, 'listPlatforms' | 'reconnectPlatform' | 'testConnection' | 'findAgentServers'>;

/** A test turn answers within the window's call timeout (15 s): a model loading for the first time may need a second try. */
const TEST_TURN_TIMEOUT_MS = 12_000;

/** The API's methods for the platforms: their cards, a reconnect, "Test connection" with settings not saved yet, and the local agent servers found. */
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
    testConnection: ({ target, config, turn }) => {
      const saved = deps.savedConfig();
      const asTurn = turn === true && target === 'agent';
      return testConnection(target, config, {
        secrets: deps.secrets,
        env: deps.env,
        savedAgent: saved.agent,
        savedConfig: saved,
        ...(asTurn ? { turn: true, timeoutMs: TEST_TURN_TIMEOUT_MS } : {}),
      });
    },
    findAgentServers: async () => ({ servers: await findAgentServers() }),
  };
}
