import { parseArgs } from 'node:util';
import { PLATFORM_NAMES, type PlatformName } from '../../src/shared/platforms';

/** Every network platform has a chaos run (its server: run.ts's PLATFORM_STARTERS; its CI size: suite.ts). */
export const CHAOS_PLATFORMS = PLATFORM_NAMES;
export type ChaosPlatformName = PlatformName;

export interface ChaosOptions {
  /** Which platform's server (real or fake) the run starts: run.ts's PLATFORM_STARTERS. */
  readonly platform: ChaosPlatformName;
  readonly messages: number;
  readonly kills: number;
  readonly serverRestarts: number;
  readonly users: number;
  readonly seed: number;
  /** Requests per second, all users together. */
  readonly rate: number;
  /** One request in this many asks for a long, multi-chunk reply. */
  readonly longEvery: number;
  /** One request in this many asks for a slow turn (3.5–5 s: agents that outlive a kill by more than 3 s). */
  readonly slowEvery: number;
  readonly drainTimeoutMs: number;
  /** When given, a takeover slower than this fails the run. */
  readonly maxTakeoverMs: number | undefined;
  /** `delivery.leaseSeconds` in the gateway's config; undefined: the default (30 s). */
  readonly leaseSeconds: number | undefined;
  readonly fast: boolean;
  /** Write the figures as JSON here. */
  readonly jsonFile: string | undefined;
  /** Keep the run's temp directory (data dir, config, gateway log) instead of removing it. */
  readonly keep: boolean;
}

export const USAGE = `Usage: npm run chaos -- [--platform ${CHAOS_PLATFORMS.join('|')}] [--messages N] [--kills N] [--server-restarts N] [--users N]
                        [--seed S] [--rate R] [--long-every N] [--slow-every N]
                        [--drain-timeout-ms MS] [--max-takeover-ms MS] [--lease-seconds S]
                        [--fast] [--json FILE] [--keep]

  Defaults: 600 messages, 25 kills, 3 server restarts, 3 users, 0.6 requests/s,
  the gateway's default settings (lease 30 s), on IRC. --fast: 40 messages, 3 kills,
  1 server restart, 1.5 requests/s, lease 2 s (about a minute). Explicit flags win.`;

export class ChaosUsageError extends Error {}

function int(name: string, value: string | undefined, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min) throw new ChaosUsageError(`--${name} must be an integer ≥ ${min}, not "${value}"`);
  return parsed;
}

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new ChaosUsageError(`--${name} must be a positive number, not "${value}"`);
  return parsed;
}

export function parseChaosArgs(argv: readonly string[]): ChaosOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        platform: { type: 'string' },
        messages: { type: 'string' },
        kills: { type: 'string' },
        'server-restarts': { type: 'string' },
        users: { type: 'string' },
        seed: { type: 'string' },
        rate: { type: 'string' },
        'long-every': { type: 'string' },
        'slow-every': { type: 'string' },
        'drain-timeout-ms': { type: 'string' },
        'max-takeover-ms': { type: 'string' },
        'lease-seconds': { type: 'string' },
        fast: { type: 'boolean' },
        json: { type: 'string' },
        keep: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new ChaosUsageError((error as Error).message);
  }
  const v = parsed.values;
  if (v.help) throw new ChaosUsageError('');
  const fast = v.fast ?? false;
  const platform = v.platform ?? 'irc';
  if (!(CHAOS_PLATFORMS as readonly string[]).includes(platform)) throw new ChaosUsageError(`--platform must be one of ${CHAOS_PLATFORMS.join(', ')}, not "${platform}"`);
  return {
    platform: platform as ChaosPlatformName,
    messages: int('messages', v.messages, 1, fast ? 40 : 600),
    kills: int('kills', v.kills, 0, fast ? 3 : 25),
    serverRestarts: int('server-restarts', v['server-restarts'], 0, fast ? 1 : 3),
    users: int('users', v.users, 1, 3),
    seed: int('seed', v.seed, 0, Math.floor(Math.random() * 2 ** 31)),
    rate: positive('rate', v.rate, fast ? 1.5 : 0.6),
    longEvery: int('long-every', v['long-every'], 1, fast ? 6 : 12),
    slowEvery: int('slow-every', v['slow-every'], 1, fast ? 8 : 20),
    drainTimeoutMs: int('drain-timeout-ms', v['drain-timeout-ms'], 1_000, fast ? 45_000 : 300_000),
    maxTakeoverMs: v['max-takeover-ms'] === undefined ? undefined : int('max-takeover-ms', v['max-takeover-ms'], 0, 0),
    leaseSeconds: v['lease-seconds'] === undefined ? (fast ? 2 : undefined) : int('lease-seconds', v['lease-seconds'], 2, 30),
    fast,
    jsonFile: v.json,
    keep: v.keep ?? false,
  };
}

/** mulberry32: a small seeded generator, so a run's schedule can be replayed with --seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
