import { discordIntake } from './intake';
import { fingerprintOf, infoFor, pairingAccess, schemaError, secretFrom, type PlatformModule, type SecretSources } from '../platform-module';
import { discordPlatformSchema, type DiscordPlatformSection } from './config-schema';
import { testDiscordConnection } from './connection-test';
import { DiscordAdapter, type DiscordAdapterOptions } from './discord-adapter';

/** Adapter timing that tests shorten (backoff, the nonce window); real use takes the defaults. */
export type DiscordTuning = Partial<Omit<DiscordAdapterOptions, 'config' | 'token' | 'dataDir' | 'access' | 'logger' | 'clock'>>;

const DEFAULT_API_URL = 'https://discord.com/api';

/** The adapter's settings and the bot token: from the variable `tokenEnv` names, else the secret store. */
function discordSettings(section: DiscordPlatformSection, sources: SecretSources) {
  const { enabled: _enabled, tokenEnv, token: _never, ...settings } = section;
  return { settings, token: secretFrom(sources, tokenEnv, 'discord.token') };
}

export const discordModule: PlatformModule<typeof discordPlatformSchema, DiscordTuning> = {
  ...infoFor('discord'),
  configSchema: discordPlatformSchema,
  settings: discordSettings,
  intake: discordIntake,
  // A message's content: up to 2 000 characters (discord-api-docs, Create Message), counted in UTF-16 units.
  sendLimits: () => ({ maxLength: 2000, unit: 'utf16' }),
  // A nonce with enforce_nonce is recognised "for a few minutes" (discord-api-docs, Create Message); the adapter takes 2 minutes.
  dedupWindow: { kind: 'for', ms: 120_000 },
  fingerprint: (section, sources) => {
    const { settings, token } = discordSettings(section, sources);
    return fingerprintOf(settings, token);
  },
  create: (section, deps, tuning) => {
    const { settings, token } = discordSettings(section, deps);
    if (token === undefined) {
      throw new Error(
        section.tokenEnv
          ? `the bot token is not set: the variable ${section.tokenEnv} is empty`
          : 'the bot token is not set: paste it in Platforms → Discord (Developer Portal → your application → Bot → Reset Token)',
      );
    }
    return new DiscordAdapter({
      config: settings,
      token,
      dataDir: deps.dataDir,
      access: pairingAccess('discord', deps.pairing),
      logger: deps.logger,
      clock: deps.clock,
      ...tuning,
    });
  },
  testConnection: async (input, deps) => {
    const parsed = discordPlatformSchema.safeParse(input);
    if (!parsed.success) return schemaError('platforms.discord', parsed.error.issues);
    const saved = deps.savedSection;
    const savedUrl = saved?.apiUrl ?? DEFAULT_API_URL;
    // The token (and the variable holding it) come from the saved section, and go only to the API they were saved for.
    const token = saved ? discordSettings(saved, deps).token : deps.secrets.get('discord.token');
    if (parsed.data.apiUrl !== savedUrl && token !== undefined) {
      return { ok: false, message: `the saved bot token was not sent: it was saved for ${savedUrl}; save the settings first` };
    }
    return testDiscordConnection(parsed.data.apiUrl, token, deps.timeoutMs);
  },
};
