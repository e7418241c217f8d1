import { matrixIntake } from './intake';
import { fingerprintOf, infoFor, pairingAccess, schemaError, secretFrom, type PlatformModule, type SecretSources } from '../platform-module';
import { matrixPlatformSchema, type MatrixPlatformSection } from './config-schema';
import { testMatrixConnection } from './connection-test';
import { MATRIX_CHUNK_BYTES, MatrixAdapter, type MatrixAdapterOptions, type MatrixCredentials } from './matrix-adapter';

/** Adapter timing that tests shorten (backoff, sync timeouts); real use takes the defaults. */
export type MatrixTuning = Partial<Omit<MatrixAdapterOptions, 'config' | 'credentials' | 'dataDir' | 'access' | 'logger' | 'clock'>>;

/**
 * The adapter's settings and how it logs in: an access token (from the variable
 * `accessTokenEnv` names, else the secret store) wins over a password (likewise);
 * without either it cannot start.
 */
export function matrixSettings(section: MatrixPlatformSection, sources: SecretSources): { settings: MatrixAdapterOptions['config']; credentials: MatrixCredentials | undefined } {
  const { enabled: _enabled, accessTokenEnv, passwordEnv, accessToken: _never, password: _neither, ...settings } = section;
  const accessToken = secretFrom(sources, accessTokenEnv, 'matrix.accessToken');
  if (accessToken !== undefined) return { settings, credentials: { accessToken } };
  const password = secretFrom(sources, passwordEnv, 'matrix.password');
  return { settings, credentials: password !== undefined ? { password } : undefined };
}

export const matrixModule: PlatformModule<typeof matrixPlatformSchema, MatrixTuning> = {
  ...infoFor('matrix'),
  configSchema: matrixPlatformSchema,
  settings: matrixSettings,
  intake: matrixIntake,
  sendLimits: () => ({ maxLength: MATRIX_CHUNK_BYTES, unit: 'bytes' }),
  // A txnId is recognised for 24 h by Synapse and at least 30 min by Dendrite (matrix-adapter.ts says where);
  // the adapter learns which from the server's version at login.
  dedupWindow: { kind: 'by-server', atLeastMs: 30 * 60 * 1000, atMostMs: 24 * 60 * 60 * 1000 },
  fingerprint: (section, sources) => {
    const { settings, credentials } = matrixSettings(section, sources);
    // Which kind of credential is part of it: a token replacing a password of the same hash is still a change.
    const secret = credentials === undefined ? undefined : 'accessToken' in credentials ? `token:${credentials.accessToken}` : `password:${credentials.password}`;
    return fingerprintOf(settings, secret);
  },
  create: (section, deps, tuning) => {
    const { settings, credentials } = matrixSettings(section, deps);
    if (credentials === undefined) {
      throw new Error(
        section.accessTokenEnv || section.passwordEnv
          ? `the access token or password is not set: the variable ${section.accessTokenEnv ?? section.passwordEnv} is empty`
          : 'the access token or password is not set: enter one in Platforms → Matrix',
      );
    }
    return new MatrixAdapter({
      config: settings,
      credentials,
      dataDir: deps.dataDir,
      access: pairingAccess('matrix', deps.pairing),
      logger: deps.logger,
      clock: deps.clock,
      ...tuning,
    });
  },
  testConnection: async (input, deps) => {
    const parsed = matrixPlatformSchema.safeParse(input);
    if (!parsed.success) return schemaError('platforms.matrix', parsed.error.issues);
    const saved = deps.savedSection;
    // The token or password comes from the saved section and goes only to the homeserver (and user) it was saved for.
    const { credentials } = saved ? matrixSettings(saved, deps) : matrixSettings({ ...parsed.data, accessTokenEnv: undefined, passwordEnv: undefined }, deps);
    if (credentials !== undefined && saved && (saved.homeserver !== parsed.data.homeserver || saved.user !== parsed.data.user)) {
      return { ok: false, message: `the saved access token or password was not sent: it was saved for ${saved.user} on ${saved.homeserver}; save the settings first` };
    }
    return testMatrixConnection(parsed.data.homeserver, parsed.data.user, credentials, deps.timeoutMs, deps.fetch ?? fetch);
  },
};
