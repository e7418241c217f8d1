import { fingerprintOf, infoFor, pairingAccess, schemaError, type PlatformModule } from '../platform-module';
import { signalPlatformSchema, type SignalPlatformSection } from './config-schema';
import { testSignalConnection } from './connection-test';
import { signalIntake } from './intake';
import { SIGNAL_MAX_BYTES, SignalAdapter, type SignalAdapterOptions } from './signal-adapter';

/** Adapter timing that tests shorten (the receive wait, backoff, typing); real use takes the defaults. */
export type SignalTuning = Partial<Omit<SignalAdapterOptions, 'config' | 'dataDir' | 'access' | 'logger' | 'clock'>>;

/** The adapter's settings: Signal has no secret in Homing (the keys are signal-cli's). */
function signalSettings(section: SignalPlatformSection) {
  const { enabled: _enabled, ...settings } = section;
  return { settings };
}

export const signalModule: PlatformModule<typeof signalPlatformSchema, SignalTuning> = {
  ...infoFor('signal'),
  configSchema: signalPlatformSchema,
  settings: signalSettings,
  intake: signalIntake,
  // A body up to 2 000 bytes of UTF-8 goes as is; signal-cli sends a longer one as a "long text"
  // attachment (ServiceConfig.MAX_MESSAGE_SIZE_BYTES = 2000, ManagerImpl.applyMessage): chunks stay within it.
  sendLimits: () => ({ maxLength: SIGNAL_MAX_BYTES, unit: 'bytes' }),
  // `send` has no idempotency key: a resend that may have arrived carries the marker.
  dedupWindow: { kind: 'none' },
  fingerprint: (section) => fingerprintOf(signalSettings(section).settings),
  create: (section, deps, tuning) =>
    new SignalAdapter({
      config: signalSettings(section).settings,
      dataDir: deps.dataDir,
      access: pairingAccess('signal', deps.pairing),
      logger: deps.logger,
      clock: deps.clock,
      ...tuning,
    }),
  testConnection: async (input, deps) => {
    const parsed = signalPlatformSchema.safeParse(input);
    if (!parsed.success) return schemaError('platforms.signal', parsed.error.issues);
    return testSignalConnection(parsed.data, deps.timeoutMs);
  },
};
