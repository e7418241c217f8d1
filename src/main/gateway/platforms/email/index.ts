import { emailIntake } from './intake';
import { fingerprintOf, infoFor, refusedFor, schemaError, secretFrom, type PlatformModule, type SecretSources } from '../platform-module';
import { emailPlatformSchema, type EmailPlatformSection } from './config-schema';
import { testEmailConnection } from './connection-test';
import { EmailAdapter, type EmailAdapterOptions } from './email-adapter';

/** Adapter timing that tests shorten (polling, backoff); real use takes the defaults. */
export type EmailTuning = Partial<Omit<EmailAdapterOptions, 'config' | 'password' | 'dataDir' | 'logger' | 'clock' | 'onRefused'>>;

/** The adapter's settings and the mailbox password: from the variable `passwordEnv` names, else the secret store. */
function emailSettings(section: EmailPlatformSection, sources: SecretSources) {
  const { enabled: _enabled, passwordEnv, password: _never, ...settings } = section;
  return { settings, password: secretFrom(sources, passwordEnv, 'email.password') };
}

export const emailModule: PlatformModule<typeof emailPlatformSchema, EmailTuning> = {
  ...infoFor('email'),
  configSchema: emailPlatformSchema,
  settings: emailSettings,
  intake: emailIntake,
  // A reply is one mail: SMTP servers take far more, 2 MiB keeps it polite.
  sendLimits: () => ({ maxLength: 2 * 1024 * 1024, unit: 'bytes' }),
  dedupWindow: { kind: 'none' },
  fingerprint: (section, sources) => {
    const { settings, password } = emailSettings(section, sources);
    return fingerprintOf(settings, password);
  },
  create: (section, deps, tuning) => {
    const { settings, password } = emailSettings(section, deps);
    if (password === undefined) {
      throw new Error(section.passwordEnv ? `the mailbox password is not set: the variable ${section.passwordEnv} is empty` : 'the mailbox password is not set: enter it in Platforms → Email');
    }
    return new EmailAdapter({
      config: settings,
      password,
      dataDir: deps.dataDir,
      logger: deps.logger,
      clock: deps.clock,
      ...refusedFor('email', deps),
      ...tuning,
    });
  },
  testConnection: async (input, deps) => {
    const parsed = emailPlatformSchema.safeParse(input);
    if (!parsed.success) return schemaError('platforms.email', parsed.error.issues);
    const { settings } = emailSettings(parsed.data, deps);
    // The password comes from the saved section and goes only to the servers it was saved for.
    const saved = deps.savedSection;
    // Nothing saved yet (a first setup): the password just entered in the window.
    const password = saved ? emailSettings(saved, deps).password : deps.secrets.get('email.password');
    const sameServers =
      saved === undefined ||
      (saved.imap.host.toLowerCase() === settings.imap.host.toLowerCase() &&
        saved.smtp.host.toLowerCase() === settings.smtp.host.toLowerCase() &&
        (saved.imap.security === 'none' || settings.imap.security !== 'none') &&
        (saved.smtp.security === 'none' || settings.smtp.security !== 'none'));
    if (password !== undefined && !sameServers) {
      return {
        ok: false,
        message: `the saved password was not sent: it was saved for ${saved!.imap.host} and ${saved!.smtp.host}${saved!.imap.security === 'none' ? '' : ' with encryption'}; save the settings first`,
      };
    }
    return testEmailConnection(settings, password, deps.timeoutMs);
  },
};
