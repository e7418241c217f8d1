import type { ConfigView } from '../../../shared/api';
import { ApiFailure, type ApiHandlers } from '../api/server';
import type { Clock } from '../clock';
import type { ConfigService } from './config-service';

type ConfigHandlers = Pick<ApiHandlers, 'getConfig' | 'setConfig' | 'replaceConfig'>;

/** The API's methods for config.json: read it, save a change (in force once answered), or replace a broken file after backing it up. */
export function configApiHandlers<Config>(deps: { readonly config: Pick<ConfigService<Config>, 'write' | 'replace'>; readonly view: () => ConfigView; readonly clock: Clock }): ConfigHandlers {
  return {
    getConfig: () => deps.view(),
    // Answers once the new config is in force (or refused, with nothing written).
    setConfig: async ({ config }) => {
      const result = await deps.config.write(config);
      if (!result.ok) throw new ApiFailure('conflict' in result ? 'conflict' : 'bad-request', result.error);
      return deps.view();
    },
    replaceConfig: async ({ config }) => {
      const result = await deps.config.replace(config, new Date(deps.clock.now()));
      if (!result.ok) throw new ApiFailure('bad-request', result.error);
      return { view: deps.view(), backup: result.backup ?? null };
    },
  };
}
