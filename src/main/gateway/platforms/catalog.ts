import { createHash } from 'node:crypto';
import type { Clock } from '../clock';
import type { z } from 'zod';
import type { discordPlatformSchema, emailPlatformSchema, HomingConfig, ircPlatformSchema, matrixPlatformSchema, telegramPlatformSchema, xmppPlatformSchema } from '../config/schema';
import type { PairingStore } from '../access/pairing-store';
import type { Logger } from '../logger';
import type { SecretStore } from '../secrets/secret-store';
import { DiscordAdapter, type DiscordAdapterOptions } from './discord/discord-adapter';
import { EmailAdapter, type EmailAdapterOptions } from './email/email-adapter';
import { IrcAdapter, type IrcAdapterOptions } from './irc/irc-adapter';
import { LOCAL_PLATFORM, type LocalAdapter } from './local/local-adapter';
import type { AdapterFactory } from './manager';
import { MatrixAdapter, type MatrixAdapterOptions, type MatrixCredentials } from './matrix/matrix-adapter';
import { TelegramAdapter, type TelegramAdapterOptions } from './telegram/telegram-adapter';
import { XmppAdapter, type XmppAdapterOptions } from './xmpp/xmpp-adapter';

/** Adapter timing that tests shorten (pacing, backoff); real use takes the defaults. */
export interface PlatformTuning {
  readonly irc?: Partial<Omit<IrcAdapterOptions, 'config' | 'logger' | 'clock'>>;
  readonly telegram?: Partial<Omit<TelegramAdapterOptions, 'config' | 'token' | 'dataDir' | 'access' | 'logger' | 'clock'>>;
  readonly matrix?: Partial<Omit<MatrixAdapterOptions, 'config' | 'credentials' | 'dataDir' | 'access' | 'logger' | 'clock'>>;
  readonly email?: Partial<Omit<EmailAdapterOptions, 'config' | 'password' | 'dataDir' | 'logger' | 'clock' | 'onRefused'>>;
  readonly discord?: Partial<Omit<DiscordAdapterOptions, 'config' | 'token' | 'dataDir' | 'access' | 'logger' | 'clock'>>;
  readonly xmpp?: Partial<Omit<XmppAdapterOptions, 'config' | 'password' | 'dataDir' | 'access' | 'logger' | 'clock'>>;
}

export interface CatalogDeps {
  readonly local: LocalAdapter;
  readonly secrets: SecretStore;
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly tuning: PlatformTuning;
  /** Where adapters keep what they must remember (Telegram's update position). */
  readonly dataDir: string;
  /** Who may talk to the agent (pairing of new senders). */
  readonly pairing: PairingStore;
  /** Told when a platform refuses a sender who is not allowed to talk to the agent (the window's activity log shows it). */
  readonly onRefused?: (platform: string, sender: string) => void;
}

/**
 * The platforms a config asks for, each with a fingerprint of everything its
 * adapter is built from (secrets as a hash), so a config change restarts exactly
 * the adapters it touches. The local chat is always there.
 */
export function platformWanted(config: HomingConfig, deps: CatalogDeps): Map<string, { fingerprint: string; create: AdapterFactory }> {
  const wanted = new Map<string, { fingerprint: string; create: AdapterFactory }>();
  wanted.set(LOCAL_PLATFORM, { fingerprint: LOCAL_PLATFORM, create: () => deps.local });

  const irc = config.platforms.irc;
  if (irc && irc.enabled) {
    const { settings, password } = ircSettings(irc, deps);
    wanted.set('irc', {
      fingerprint: JSON.stringify([settings, password === undefined ? null : digest(password)]),
      create: () =>
        new IrcAdapter({
          config: { ...settings, ...(password !== undefined ? { password } : {}) },
          logger: deps.logger,
          clock: deps.clock,
          access: {
            isApproved: (senderId) => deps.pairing.isApproved('irc', senderId),
            requestPairing: (sender) => deps.pairing.request('irc', sender),
            owedPairing: () => deps.pairing.owed('irc'),
            pairingTold: (senderId, code) => deps.pairing.told('irc', senderId, code),
          },
          ...(deps.onRefused ? { onRefused: (nick: string) => deps.onRefused!('irc', nick) } : {}),
          ...deps.tuning.irc,
        }),
    });
  }

  const telegram = config.platforms.telegram;
  if (telegram && telegram.enabled) {
    const { settings, token } = telegramSettings(telegram, deps);
    wanted.set('telegram', {
      fingerprint: JSON.stringify([settings, token === undefined ? null : digest(token)]),
      create: () => {
        if (token === undefined) {
          throw new Error(
            telegram.tokenEnv ? `the bot token is not set: the variable ${telegram.tokenEnv} is empty` : 'the bot token is not set: paste it in Platforms → Telegram (from @BotFather)',
          );
        }
        return new TelegramAdapter({
          config: settings,
          token,
          dataDir: deps.dataDir,
          access: {
            isApproved: (senderId) => deps.pairing.isApproved('telegram', senderId),
            requestPairing: (sender) => deps.pairing.request('telegram', sender),
            owedPairing: () => deps.pairing.owed('telegram'),
            pairingTold: (senderId, code) => deps.pairing.told('telegram', senderId, code),
          },
          logger: deps.logger,
          clock: deps.clock,
          ...deps.tuning.telegram,
        });
      },
    });
  }

  const matrix = config.platforms.matrix;
  if (matrix && matrix.enabled) {
    const { settings, credentials } = matrixSettings(matrix, deps);
    const secret = credentials === undefined ? null : 'accessToken' in credentials ? ['token', digest(credentials.accessToken)] : ['password', digest(credentials.password)];
    wanted.set('matrix', {
      fingerprint: JSON.stringify([settings, secret]),
      create: () => {
        if (credentials === undefined) {
          throw new Error(
            matrix.accessTokenEnv || matrix.passwordEnv
              ? `the access token or password is not set: the variable ${matrix.accessTokenEnv ?? matrix.passwordEnv} is empty`
              : 'the access token or password is not set: enter one in Platforms → Matrix',
          );
        }
        return new MatrixAdapter({
          config: settings,
          credentials,
          dataDir: deps.dataDir,
          access: {
            isApproved: (senderId) => deps.pairing.isApproved('matrix', senderId),
            requestPairing: (sender) => deps.pairing.request('matrix', sender),
            owedPairing: () => deps.pairing.owed('matrix'),
            pairingTold: (senderId, code) => deps.pairing.told('matrix', senderId, code),
          },
          logger: deps.logger,
          clock: deps.clock,
          ...deps.tuning.matrix,
        });
      },
    });
  }
  const email = config.platforms.email;
  if (email && email.enabled) {
    const { settings, password } = emailSettings(email, deps);
    wanted.set('email', {
      fingerprint: JSON.stringify([settings, password === undefined ? null : digest(password)]),
      create: () => {
        if (password === undefined) {
          throw new Error(email.passwordEnv ? `the mailbox password is not set: the variable ${email.passwordEnv} is empty` : 'the mailbox password is not set: enter it in Platforms → Email');
        }
        return new EmailAdapter({
          config: settings,
          password,
          dataDir: deps.dataDir,
          logger: deps.logger,
          clock: deps.clock,
          ...(deps.onRefused ? { onRefused: (sender: string) => deps.onRefused!('email', sender) } : {}),
          ...deps.tuning.email,
        });
      },
    });
  }
  const discord = config.platforms.discord;
  if (discord && discord.enabled) {
    const { settings, token } = discordSettings(discord, deps);
    wanted.set('discord', {
      fingerprint: JSON.stringify([settings, token === undefined ? null : digest(token)]),
      create: () => {
        if (token === undefined) {
          throw new Error(
            discord.tokenEnv
              ? `the bot token is not set: the variable ${discord.tokenEnv} is empty`
              : 'the bot token is not set: paste it in Platforms → Discord (Developer Portal → your application → Bot → Reset Token)',
          );
        }
        return new DiscordAdapter({
          config: settings,
          token,
          dataDir: deps.dataDir,
          access: {
            isApproved: (senderId) => deps.pairing.isApproved('discord', senderId),
            requestPairing: (sender) => deps.pairing.request('discord', sender),
            owedPairing: () => deps.pairing.owed('discord'),
            pairingTold: (senderId, code) => deps.pairing.told('discord', senderId, code),
          },
          logger: deps.logger,
          clock: deps.clock,
          ...deps.tuning.discord,
        });
      },
    });
  }
  const xmpp = config.platforms.xmpp;
  if (xmpp && xmpp.enabled) {
    const { settings, password } = xmppSettings(xmpp, deps);
    wanted.set('xmpp', {
      fingerprint: JSON.stringify([settings, password === undefined ? null : digest(password)]),
      create: () => {
        if (password === undefined) {
          throw new Error(
            xmpp.passwordEnv ? `the XMPP password is not set: the variable ${xmpp.passwordEnv} is empty` : `the password for ${settings.jid} is not set: enter it in Platforms → XMPP`,
          );
        }
        return new XmppAdapter({
          config: settings,
          password,
          dataDir: deps.dataDir,
          access: {
            isApproved: (senderId) => deps.pairing.isApproved('xmpp', senderId),
            requestPairing: (sender) => deps.pairing.request('xmpp', sender),
            owedPairing: () => deps.pairing.owed('xmpp'),
            pairingTold: (senderId, code) => deps.pairing.told('xmpp', senderId, code),
          },
          logger: deps.logger,
          clock: deps.clock,
          ...(deps.onRefused ? { onRefused: (sender: string) => deps.onRefused!('xmpp', sender) } : {}),
          ...deps.tuning.xmpp,
        });
      },
    });
  }
  return wanted;
}

/**
 * The Matrix adapter's settings and how it logs in: an access token (from the
 * variable `accessTokenEnv` names, else the secret store) wins over a password
 * (likewise); without either it cannot start.
 */
export function matrixSettings(
  matrix: z.output<typeof matrixPlatformSchema>,
  deps: Pick<CatalogDeps, 'env' | 'secrets'>,
): { settings: MatrixAdapterOptions['config']; credentials: MatrixCredentials | undefined } {
  const { enabled: _enabled, accessTokenEnv, passwordEnv, accessToken: _never, password: _neither, ...settings } = matrix;
  const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
  const accessToken = nonEmpty(accessTokenEnv ? deps.env[accessTokenEnv] : undefined) ?? nonEmpty(deps.secrets.get('matrix.accessToken'));
  if (accessToken !== undefined) return { settings, credentials: { accessToken } };
  const password = nonEmpty(passwordEnv ? deps.env[passwordEnv] : undefined) ?? nonEmpty(deps.secrets.get('matrix.password'));
  return { settings, credentials: password !== undefined ? { password } : undefined };
}

/** The email adapter's settings and the mailbox password: from the variable `passwordEnv` names, else the secret store. */
export function emailSettings(email: z.output<typeof emailPlatformSchema>, deps: Pick<CatalogDeps, 'env' | 'secrets'>) {
  const { enabled: _enabled, passwordEnv, password: _never, ...settings } = email;
  const password = (passwordEnv ? deps.env[passwordEnv] : undefined) ?? deps.secrets.get('email.password');
  return { settings, password: password === '' ? undefined : password };
}

/** The Discord adapter's settings and the bot token: from the variable `tokenEnv` names, else the secret store. */
export function discordSettings(discord: z.output<typeof discordPlatformSchema>, deps: Pick<CatalogDeps, 'env' | 'secrets'>) {
  const { enabled: _enabled, tokenEnv, token: _never, ...settings } = discord;
  const token = (tokenEnv ? deps.env[tokenEnv] : undefined) ?? deps.secrets.get('discord.token');
  return { settings, token: token === '' ? undefined : token };
}

/** The XMPP adapter's settings and the account's password: from the variable `passwordEnv` names, else the secret store. */
export function xmppSettings(xmpp: z.output<typeof xmppPlatformSchema>, deps: Pick<CatalogDeps, 'env' | 'secrets'>) {
  const { enabled: _enabled, passwordEnv, password: _never, ...settings } = xmpp;
  const password = (passwordEnv ? deps.env[passwordEnv] : undefined) ?? deps.secrets.get('xmpp.password');
  return { settings, password: password === '' ? undefined : password };
}

/** The Telegram adapter's settings and the bot token: from the variable `tokenEnv` names, else the secret store. */
export function telegramSettings(telegram: z.output<typeof telegramPlatformSchema>, deps: Pick<CatalogDeps, 'env' | 'secrets'>) {
  const { enabled: _enabled, tokenEnv, token: _never, ...settings } = telegram;
  const token = (tokenEnv ? deps.env[tokenEnv] : undefined) ?? deps.secrets.get('telegram.token');
  return { settings, token: token === '' ? undefined : token };
}

/**
 * The IRC adapter's settings from the config's section, and the password: from
 * the environment variable the config names, else from the secret store.
 */
export function ircSettings(irc: z.output<typeof ircPlatformSchema>, deps: Pick<CatalogDeps, 'env' | 'secrets'>) {
  const { enabled: _enabled, passwordEnv, password: _never, ...settings } = irc;
  const password = (passwordEnv ? deps.env[passwordEnv] : undefined) ?? deps.secrets.get('irc.password');
  return { settings, password };
}

/** A short hash of a secret, so a fingerprint changes with it without holding it. */
export function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 16);
}
