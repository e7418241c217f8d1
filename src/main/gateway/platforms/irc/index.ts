import { ircIntake } from './intake';
import { fingerprintOf, infoFor, pairingAccess, refusedFor, schemaError, secretFrom, type PlatformModule } from '../platform-module';
import { ircPlatformSchema, type IrcPlatformSection } from './config-schema';
import { testIrcConnection } from './connection-test';
import { IrcAdapter, type IrcAdapterOptions } from './irc-adapter';

/** Adapter timing that tests shorten (pacing, backoff); real use takes the defaults. */
export type IrcTuning = Partial<Omit<IrcAdapterOptions, 'config' | 'logger' | 'clock'>>;

/** The adapter's settings and the server password: from the variable `passwordEnv` names, else the secret store. */
function ircSettings(section: IrcPlatformSection, sources: Parameters<typeof secretFrom>[0]) {
  const { enabled: _enabled, passwordEnv, password: _never, ...settings } = section;
  return { settings, password: secretFrom(sources, passwordEnv, 'irc.password') };
}

export const ircModule: PlatformModule<typeof ircPlatformSchema, IrcTuning> = {
  ...infoFor('irc'),
  configSchema: ircPlatformSchema,
  settings: ircSettings,
  intake: ircIntake,
  // 4 000 bytes before the adapter splits at IRC's own 512-byte line limit (lines.ts).
  sendLimits: () => ({ maxLength: 4000, unit: 'bytes' }),
  dedupWindow: { kind: 'none' },
  fingerprint: (section, sources) => {
    const { settings, password } = ircSettings(section, sources);
    return fingerprintOf(settings, password);
  },
  create: (section, deps, tuning) => {
    const { settings, password } = ircSettings(section, deps);
    return new IrcAdapter({
      config: { ...settings, ...(password !== undefined ? { password } : {}) },
      logger: deps.logger,
      clock: deps.clock,
      access: pairingAccess('irc', deps.pairing),
      ...refusedFor('irc', deps),
      ...tuning,
    });
  },
  testConnection: async (input, deps) => {
    const parsed = ircPlatformSchema.safeParse(input);
    if (!parsed.success) return schemaError('platforms.irc', parsed.error.issues);
    return testIrcConnection(parsed.data, deps);
  },
};
