import { telegramIntake } from './intake';
import { fingerprintOf, infoFor, pairingAccess, schemaError, secretFrom, type PlatformModule, type SecretSources } from '../platform-module';
import { telegramPlatformSchema, type TelegramPlatformSection } from './config-schema';
import { testTelegramConnection } from './connection-test';
import { TelegramAdapter, type TelegramAdapterOptions } from './telegram-adapter';

/** Adapter timing that tests shorten (backoff, conflict waits); real use takes the defaults. */
export type TelegramTuning = Partial<Omit<TelegramAdapterOptions, 'config' | 'token' | 'dataDir' | 'access' | 'logger' | 'clock'>>;

const DEFAULT_API_ROOT = 'https://api.telegram.org';

/** The adapter's settings and the bot token: from the variable `tokenEnv` names, else the secret store. */
function telegramSettings(section: TelegramPlatformSection, sources: SecretSources) {
  const { enabled: _enabled, tokenEnv, token: _never, ...settings } = section;
  return { settings, token: secretFrom(sources, tokenEnv, 'telegram.token') };
}

export const telegramModule: PlatformModule<typeof telegramPlatformSchema, TelegramTuning> = {
  ...infoFor('telegram'),
  configSchema: telegramPlatformSchema,
  settings: telegramSettings,
  intake: telegramIntake,
  // sendMessage's text: 1-4096 characters after entities parsing (Bot API, sendMessage).
  sendLimits: () => ({ maxLength: 4096, unit: 'code-points' }),
  dedupWindow: { kind: 'none' },
  fingerprint: (section, sources) => {
    const { settings, token } = telegramSettings(section, sources);
    return fingerprintOf(settings, token);
  },
  create: (section, deps, tuning) => {
    const { settings, token } = telegramSettings(section, deps);
    if (token === undefined) {
      throw new Error(
        section.tokenEnv ? `the bot token is not set: the variable ${section.tokenEnv} is empty` : 'the bot token is not set: paste it in Platforms → Telegram (from @BotFather)',
      );
    }
    return new TelegramAdapter({
      config: settings,
      token,
      dataDir: deps.dataDir,
      access: pairingAccess('telegram', deps.pairing),
      logger: deps.logger,
      clock: deps.clock,
      ...tuning,
    });
  },
  testConnection: async (input, deps) => {
    const parsed = telegramPlatformSchema.safeParse(input);
    if (!parsed.success) return schemaError('platforms.telegram', parsed.error.issues);
    const saved = deps.savedSection;
    const savedRoot = saved?.apiRoot ?? DEFAULT_API_ROOT;
    // The token (and the variable holding it) come from the saved section, and go only to the API they were saved for.
    const token = saved ? telegramSettings(saved, deps).token : deps.secrets.get('telegram.token');
    if (parsed.data.apiRoot !== savedRoot && token !== undefined) {
      return { ok: false, message: `the saved bot token was not sent: it was saved for ${savedRoot}; save the settings first` };
    }
    return testTelegramConnection(parsed.data.apiRoot, token, deps.timeoutMs);
  },
};
