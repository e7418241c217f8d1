import { xmppIntake } from './intake';
import { fingerprintOf, infoFor, pairingAccess, refusedFor, schemaError, secretFrom, type PlatformModule, type SecretSources } from '../platform-module';
import { xmppPlatformSchema, type XmppPlatformSection } from './config-schema';
import { testXmppConnection } from './connection-test';
import { XmppAdapter, type XmppAdapterOptions } from './xmpp-adapter';

/** Adapter timing that tests shorten (backoff, archive paging); real use takes the defaults. */
export type XmppTuning = Partial<Omit<XmppAdapterOptions, 'config' | 'password' | 'dataDir' | 'access' | 'logger' | 'clock'>>;

/** The adapter's settings and the account's password: from the variable `passwordEnv` names, else the secret store. */
function xmppSettings(section: XmppPlatformSection, sources: SecretSources) {
  const { enabled: _enabled, passwordEnv, password: _never, ...settings } = section;
  return { settings, password: secretFrom(sources, passwordEnv, 'xmpp.password') };
}

export const xmppModule: PlatformModule<typeof xmppPlatformSchema, XmppTuning> = {
  ...infoFor('xmpp'),
  configSchema: xmppPlatformSchema,
  settings: xmppSettings,
  intake: xmppIntake,
  sendLimits: (section) => ({ maxLength: section.maxMessageBytes, unit: 'bytes' }),
  dedupWindow: { kind: 'none' },
  fingerprint: (section, sources) => {
    const { settings, password } = xmppSettings(section, sources);
    return fingerprintOf(settings, password);
  },
  create: (section, deps, tuning) => {
    const { settings, password } = xmppSettings(section, deps);
    if (password === undefined) {
      throw new Error(section.passwordEnv ? `the XMPP password is not set: the variable ${section.passwordEnv} is empty` : `the password for ${settings.jid} is not set: enter it in Platforms → XMPP`);
    }
    return new XmppAdapter({
      config: settings,
      password,
      dataDir: deps.dataDir,
      access: pairingAccess('xmpp', deps.pairing),
      logger: deps.logger,
      clock: deps.clock,
      ...refusedFor('xmpp', deps),
      ...tuning,
    });
  },
  /**
   * The saved password goes only to the account and server it was saved for
   * (the same JID, host and port, and not in plain text if it was saved for an
   * encrypted connection); the variable holding it comes from the saved section.
   */
  testConnection: async (input, deps) => {
    const parsed = xmppPlatformSchema.safeParse(input);
    if (!parsed.success) return schemaError('platforms.xmpp', parsed.error.issues);
    const { enabled: _enabled, passwordEnv: _passwordEnv, password: _never, ...settings } = parsed.data;
    const saved = deps.savedSection;
    let password: string | undefined;
    let note = '';
    if (saved) {
      const same =
        saved.jid === settings.jid &&
        (saved.host ?? '') === (settings.host ?? '') &&
        (saved.port ?? 0) === (settings.port ?? 0) &&
        (settings.security !== 'none' || saved.security === 'none');
      const savedPassword = xmppSettings(saved, deps).password;
      if (same) password = savedPassword;
      else if (savedPassword !== undefined) {
        note = ` (the saved password was not sent: it was saved for ${saved.jid}${saved.host ? ` on ${saved.host}` : ''}${saved.security !== 'none' ? ' with encryption' : ''}; save the settings first)`;
      }
    } else {
      password = deps.secrets.get('xmpp.password');
    }
    return testXmppConnection(settings, password, deps.timeoutMs, note);
  },
};
