import { fingerprintOf, infoFor, pairingAccess, schemaError, secretFrom, type PlatformModule, type SecretSources } from '../platform-module';
import { slackPlatformSchema, type SlackPlatformSection } from './config-schema';
import { testSlackConnection } from './connection-test';
import { slackIntake } from './intake';
import { SlackAdapter, type SlackAdapterOptions } from './slack-adapter';

/** Adapter timing that tests shorten (backoff, the longest 429 waited out in a send); real use takes the defaults. */
export type SlackTuning = Partial<Omit<SlackAdapterOptions, 'config' | 'appToken' | 'botToken' | 'dataDir' | 'access' | 'logger' | 'clock'>>;

const DEFAULT_API_URL = 'https://slack.com/api/';

/** The adapter's settings and both tokens: each from the variable its `…Env` names, else the secret store. */
function slackSettings(section: SlackPlatformSection, sources: SecretSources) {
  const { enabled: _enabled, appTokenEnv, botTokenEnv, appToken: _never, botToken: _neither, ...settings } = section;
  return { settings, appToken: secretFrom(sources, appTokenEnv, 'slack.appToken'), botToken: secretFrom(sources, botTokenEnv, 'slack.botToken') };
}

function missing(section: SlackPlatformSection, which: 'app' | 'bot'): string {
  const env = which === 'app' ? section.appTokenEnv : section.botTokenEnv;
  if (env) return `the ${which === 'app' ? 'app-level' : 'bot'} token is not set: the variable ${env} is empty`;
  return which === 'app'
    ? 'the app-level token is not set: paste it in Platforms → Slack (api.slack.com/apps → your app → Basic Information → App-Level Tokens, scope connections:write)'
    : 'the bot token is not set: paste it in Platforms → Slack (api.slack.com/apps → your app → OAuth & Permissions → Bot User OAuth Token)';
}

export const slackModule: PlatformModule<typeof slackPlatformSchema, SlackTuning> = {
  ...infoFor('slack'),
  configSchema: slackPlatformSchema,
  settings: slackSettings,
  intake: slackIntake,
  // chat.postMessage: up to 40 000 characters, at most 4 000 advised (docs.slack.dev, chat.postMessage, "Truncating content").
  sendLimits: () => ({ maxLength: 4000, unit: 'code-points' }),
  // chat.postMessage takes no idempotency key: a part that may have arrived is resent with the marker.
  dedupWindow: { kind: 'none' },
  fingerprint: (section, sources) => {
    const { settings, appToken, botToken } = slackSettings(section, sources);
    return fingerprintOf(settings, appToken, botToken);
  },
  create: (section, deps, tuning) => {
    const { settings, appToken, botToken } = slackSettings(section, deps);
    if (appToken === undefined) throw new Error(missing(section, 'app'));
    if (botToken === undefined) throw new Error(missing(section, 'bot'));
    return new SlackAdapter({
      config: settings,
      appToken,
      botToken,
      dataDir: deps.dataDir,
      access: pairingAccess('slack', deps.pairing),
      logger: deps.logger,
      clock: deps.clock,
      ...tuning,
    });
  },
  testConnection: async (input, deps) => {
    const parsed = slackPlatformSchema.safeParse(input);
    if (!parsed.success) return schemaError('platforms.slack', parsed.error.issues);
    const saved = deps.savedSection;
    const savedUrl = saved?.apiUrl ?? DEFAULT_API_URL;
    // The tokens (and the variables holding them) come from the saved section, and go only to the API they were saved for.
    const tokens = saved ? slackSettings(saved, deps) : { appToken: deps.secrets.get('slack.appToken'), botToken: deps.secrets.get('slack.botToken') };
    if (parsed.data.apiUrl !== savedUrl && (tokens.appToken !== undefined || tokens.botToken !== undefined)) {
      return { ok: false, message: `the saved tokens were not sent: they were saved for ${savedUrl}; save the settings first` };
    }
    return testSlackConnection(parsed.data.apiUrl, tokens.appToken, tokens.botToken, deps.timeoutMs);
  },
};
