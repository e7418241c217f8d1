import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { ConnectionTestResult } from '../../../shared/api';
import { PLATFORM_INFO, type PlatformInfo, type PlatformName, type SecretName } from '../../../shared/platforms';
import type { PairingStore } from '../access/pairing-store';
import type { AgentConfig } from '../agents/config-schema';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import type { SecretStore } from '../secrets/secret-store';
import type { MessageLimits, PlatformAdapter } from './adapter';
import type { IntakeContract } from './intake';

/**
 * What one chat platform is to the rest of Homing: everything the gateway, the
 * config, the secret store, the connection test and the docs need to know about
 * it, in one object that its folder's `index.ts` exports and `registry.ts` lists.
 * docs/adding-a-platform.md walks through writing one.
 */
export interface PlatformModule<Schema extends z.ZodType<{ readonly enabled: boolean }> = z.ZodType<{ readonly enabled: boolean }>, Tuning = unknown> {
  /** Its entry in src/shared/platforms.ts, which the window shares; the four fields below come from it. */
  readonly info: PlatformInfo & { readonly name: PlatformName };
  /** Its name in session keys, the ledger, config.json's `platforms` and the API. */
  readonly name: PlatformName;
  readonly label: string;
  /** The secrets the secret store keeps for it (`<platform>.<secret>`). */
  readonly secretNames: readonly string[];
  /** Whether an unknown sender can ask for a pairing code (`info.pairing` says whether by default or by a setting). */
  readonly pairing: boolean;
  /** config.json's `platforms.<name>` section: the adapter's settings, `enabled`, and where its secrets come from (`…Env`). */
  readonly configSchema: Schema;
  /** How the service hands messages over and how long it keeps them (intake.ts). */
  readonly intake: IntakeContract;
  /** The longest message one send may carry, in the platform's own unit (chunking splits longer replies). */
  sendLimits(section: z.output<Schema>): MessageLimits;
  /** How long the service recognises a resent message as the same one (resends later than that carry the marker). */
  readonly dedupWindow: DedupWindow;
  /** Its adapter's settings from a saved section, with its secret(s) from the variable the section names, else the secret store. */
  settings(section: z.output<Schema>, sources: SecretSources): { readonly settings: object };
  /**
   * Everything its adapter is built from, secrets as a hash: a config or secret
   * change restarts exactly the adapters whose fingerprint it changes.
   */
  fingerprint(section: z.output<Schema>, sources: SecretSources): string;
  /** Its adapter for a saved section; throws, in words, when it cannot be set up (a secret not set). */
  create(section: z.output<Schema>, deps: PlatformDeps, tuning?: Tuning): PlatformAdapter;
  /**
   * "Test connection": tries a section before it is saved and says what happened.
   * A saved secret goes only to the server it was saved for (`deps.savedSection`).
   */
  testConnection(input: unknown, deps: ConnectionTestDeps<z.output<Schema>>): Promise<ConnectionTestResult>;
}

/** How long a platform's server deduplicates a resent message by its idempotency key. */
export type DedupWindow =
  /** No deduplication: a resend that may have arrived always carries the marker. */
  | { readonly kind: 'none' }
  | { readonly kind: 'for'; readonly ms: number }
  /** It depends on the server's software (Matrix: Synapse keeps a txnId a day, others less); the adapter asks at login. */
  | { readonly kind: 'by-server'; readonly atLeastMs: number; readonly atMostMs: number };

/** Where a secret may come from: the environment variable the config names, else the secret store. */
export interface SecretSources {
  readonly env: NodeJS.ProcessEnv;
  readonly secrets: Pick<SecretStore, 'get'>;
}

/** What every adapter is built with. */
export interface PlatformDeps extends SecretSources {
  readonly logger: Logger;
  readonly clock: Clock;
  /** Where adapters keep what they must remember (Telegram's update position). */
  readonly dataDir: string;
  /** Who may talk to the agent (pairing of new senders). */
  readonly pairing: Pick<PairingStore, 'isApproved' | 'request' | 'owed' | 'told'>;
  /** Told when a platform refuses a sender who is not allowed to talk to the agent (the window's activity log shows it). */
  readonly onRefused?: (platform: string, sender: string) => void;
}

export interface ConnectionTestDeps<Section = unknown> {
  readonly secrets: SecretStore;
  readonly env: NodeJS.ProcessEnv;
  /** How long a test may take before it says "no answer". */
  readonly timeoutMs: number;
  readonly fetch?: typeof fetch;
  /**
   * The section the saved secrets belong to (the running config's). A saved
   * secret is sent only to the server it was saved for; without a saved
   * section, the secret just entered in the window is.
   */
  readonly savedSection: Section | undefined;
  readonly savedAgent?: AgentConfig;
}

/**
 * A secret's value: from the environment variable the config names, else the
 * secret store. An empty value counts as not set.
 */
export function secretFrom(sources: SecretSources, envName: string | undefined, secretName: SecretName): string | undefined {
  const value = (envName ? sources.env[envName] : undefined) ?? sources.secrets.get(secretName);
  return value === '' ? undefined : value;
}

/** A platform's entry in the list the window shares (src/shared/platforms.ts), and the module fields that come from it. */
export function infoFor<Name extends PlatformName>(name: Name) {
  const found = PLATFORM_INFO.find((entry) => entry.name === name);
  if (!found) throw new Error(`${name} is not in src/shared/platforms.ts`);
  const info = found as unknown as PlatformInfo & { readonly name: Name };
  return { info, name, label: info.label, secretNames: info.secrets, pairing: info.pairing !== 'none' };
}

/** A short hash of a secret, so a fingerprint changes with it without holding it. */
export function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 16);
}

/** A fingerprint of settings and secrets (hashed; `undefined` for one not set). */
export function fingerprintOf(settings: unknown, ...secrets: (string | undefined)[]): string {
  return JSON.stringify([settings, ...secrets.map((secret) => (secret === undefined ? null : digest(secret)))]);
}

/** The access part of an adapter's options: pairing for this platform's senders. */
export function pairingAccess(platform: string, pairing: PlatformDeps['pairing']) {
  return {
    isApproved: (senderId: string) => pairing.isApproved(platform, senderId),
    requestPairing: (sender: Parameters<PairingStore['request']>[1]) => pairing.request(platform, sender),
    // The adapter's PairingTeller (access/pairing-teller.ts) reads what is owed and says what it told.
    owedPairing: () => pairing.owed(platform),
    pairingTold: (senderId: string, code: string) => pairing.told(platform, senderId, code),
  };
}

/** `onRefused` for one platform's adapter, when the gateway listens for refusals. */
export function refusedFor(platform: string, deps: Pick<PlatformDeps, 'onRefused'>): { onRefused?: (sender: string) => void } {
  const onRefused = deps.onRefused;
  return onRefused ? { onRefused: (sender: string) => onRefused(platform, sender) } : {};
}

/** A schema problem as one line naming the field ("platforms.irc.port: …"). */
export function schemaError(section: string, issues: readonly { path: readonly PropertyKey[]; message: string }[]): ConnectionTestResult {
  const issue = issues[0];
  const where = issue && issue.path.length > 0 ? `${section}.${issue.path.map(String).join('.')}` : section;
  return { ok: false, message: `${where}: ${issue?.message ?? 'invalid'}` };
}
