import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../logger';
import { PRIVATE_DIR_MODE, readJsonOrMoveAside, writePrivateFile } from '../../private-file';

/**
 * The last message the Discord adapter took, per channel (DMs and threads
 * included), in `<dataDir>/discord/bot-<id>.json` (0600, written atomically and
 * fsynced). A channel's position moves only once its message is saved (or
 * known to need nothing), so after a gateway outage or a crash the adapter asks
 * Discord for everything after it and loses nothing; snowflakes grow with time,
 * so "after" is a comparison of ids.
 */
const snowflake = z.string().regex(/^\d{1,20}$/);
const stateSchema = z.object({ v: z.literal(1), channels: z.record(snowflake, snowflake), since: snowflake.optional() });

/** Discord's epoch: a snowflake's top bits are milliseconds since it. */
const DISCORD_EPOCH = 1_420_070_400_000n;

/** The smallest snowflake of a moment: every message created at or after `ms` has a larger id. */
export function snowflakeAt(ms: number): string {
  return ((BigInt(Math.max(0, Math.floor(ms))) - DISCORD_EPOCH) << 22n).toString();
}

/**
 * `since` is set this much before the first connection: Discord's clock (in its ids) and
 * this machine's may differ, and a message can arrive between Discord's READY and Homing
 * reading it; a few minutes of messages to the bot from just before it was set up are
 * taken rather than any message after it lost.
 */
export const SINCE_MARGIN_MS = 2 * 60_000;

/** Channels remembered at most; the ones quiet longest are forgotten first. */
const MAX_CHANNELS = 1000;

export class ChannelPositions {
  private channels: Record<string, string>;
  /**
   * When Homing started listening for this bot (as a snowflake, SINCE_MARGIN_MS early): a channel it
   * has no position for yet (a DM that opened while Homing was down, a listed
   * channel never written in) starts from here, so what was written there
   * since is fetched and older history is not.
   */
  readonly since: string;

  constructor(
    private readonly file: string,
    logger: Logger,
    now: number = Date.now(),
  ) {
    const loaded = existsSync(file)
      ? readJsonOrMoveAside(file, stateSchema, (movedTo) =>
          logger.error('discord: the saved channel positions could not be read; moved them aside (messages sent while Homing was away are not fetched)', { movedTo }),
        )
      : undefined;
    this.channels = loaded?.channels ?? {};
    this.since = loaded?.since ?? snowflakeAt(now - SINCE_MARGIN_MS);
    if (loaded?.since === undefined) this.write(this.channels);
  }

  static forBot(dataDir: string, botId: string, logger: Logger, now?: number): ChannelPositions {
    const dir = join(dataDir, 'discord');
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    return new ChannelPositions(join(dir, `bot-${botId}.json`), logger, now);
  }

  /** Channels with a position, most recently active first. */
  known(): string[] {
    return Object.entries(this.channels)
      .sort(([, a], [, b]) => compareSnowflakes(b, a))
      .map(([channel]) => channel);
  }

  /** The channel's position: its last message taken, else `since`. */
  last(channelId: string): string {
    return this.channels[channelId] ?? this.since;
  }

  has(channelId: string): boolean {
    return this.channels[channelId] !== undefined;
  }

  /** Whether this message was taken already (it is at or before the channel's position). */
  seen(channelId: string, messageId: string): boolean {
    return compareSnowflakes(messageId, this.last(channelId)) <= 0;
  }

  /** The message is saved (or needs nothing): it is never taken again. */
  advance(channelId: string, messageId: string): void {
    if (this.seen(channelId, messageId)) return;
    const next = { ...this.channels, [channelId]: messageId };
    const ids = Object.keys(next);
    if (ids.length > MAX_CHANNELS) {
      const oldest = ids.sort((a, b) => compareSnowflakes(next[a]!, next[b]!)).slice(0, ids.length - MAX_CHANNELS);
      for (const id of oldest) delete next[id];
    }
    this.write(next);
  }

  /** The bot cannot read the channel any more (deleted, or no access): it is no longer caught up. */
  forget(channelId: string): void {
    if (!this.has(channelId)) return;
    const { [channelId]: _gone, ...rest } = this.channels;
    this.write(rest);
  }

  private write(channels: Record<string, string>): void {
    this.channels = channels;
    writePrivateFile(this.file, JSON.stringify({ v: 1, since: this.since, channels }) + '\n');
  }
}

export function compareSnowflakes(a: string, b: string): number {
  // Same-length decimal strings compare as numbers; a shorter one is smaller.
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
