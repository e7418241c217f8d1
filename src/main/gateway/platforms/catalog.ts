import { createHash } from 'node:crypto';
import type { Clock } from '../clock';
import type { z } from 'zod';
import type { HomingConfig, ircPlatformSchema, telegramPlatformSchema, xmppPlatformSchema } from '../config/schema';
import type { PairingStore } from '../access/pairing-store';
import type { Logger } from '../logger';
import type { SecretStore } from '../secrets/secret-store';
import { IrcAdapter, type IrcAdapterOptions } from './irc/irc-adapter';
import { LOCAL_PLATFORM, type LocalAdapter } from './local/local-adapter';
import type { AdapterFactory } from './manager';
import { TelegramAdapter, type TelegramAdapterOptions } from './telegram/telegram-adapter';
import { XmppAdapter, type XmppAdapterOptions } from './xmpp/xmpp-adapter';

/** Adapter timing that tests shorten (pacing, backoff); real use takes the defaults. */
export interface PlatformTuning {
  readonly irc?: Partial<Omit<IrcAdapterOptions, 'config' | 'logger' | 'clock'>>;
  readonly telegram?: Partial<Omit<TelegramAdapterOptions, 'config' | 'token' | 'dataDir' | 'access' | 'logger' | 'clock'>>;
  readonly xmpp?: Partial<Omit<XmppAdapterOptions, 'config' | 'password' | 'access' | 'logger' | 'clock'>>;
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
          },
          logger: deps.logger,
          clock: deps.clock,
          ...deps.tuning.telegram,
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
          access: {
            isApproved: (senderId) => deps.pairing.isApproved('xmpp', senderId),
            requestPairing: (sender) => deps.pairing.request('xmpp', sender),
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
