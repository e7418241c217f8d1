import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../logger';
import { PRIVATE_DIR_MODE, readJsonOrMoveAside, writePrivateFile } from '../../private-file';
import { SLACK_TS } from './inbound';

/**
 * The last message the Slack adapter took, per conversation, in
 * `<dataDir>/slack/<team>-<bot>.json` (0600, written atomically). A
 * conversation is a channel or DM (`C…`, `D…`), or one thread in it
 * (`C…/<thread_ts>`): a channel's history holds only its top-level messages,
 * a thread's replies are read on their own. A position moves only once its
 * message is saved (or known to need nothing), so after an outage or a crash
 * the adapter asks Slack for everything after it; a message's `ts` grows with
 * time, so "after" is a comparison of timestamps.
 */
const tsSchema = z.string().regex(SLACK_TS);
const keySchema = z.string().regex(/^[CGD][A-Z0-9]{2,20}(?:\/\d{1,12}\.\d{6})?$/);
const stateSchema = z.object({ v: z.literal(1), conversations: z.record(keySchema, tsSchema), since: tsSchema });

/**
 * `since` is set this much before the first connection: a message can arrive
 * between Slack's hello and Homing reading it, and the two clocks may differ.
 */
export const SINCE_MARGIN_MS = 2 * 60_000;
/** Conversations remembered at most; the ones quiet longest are forgotten first. */
const MAX_CONVERSATIONS = 1000;

/** The `ts` of a moment: every message posted at or after `ms` has a larger one. */
export function tsAt(ms: number): string {
  const whole = Math.max(0, Math.floor(ms));
  return `${Math.floor(whole / 1000)}.${String((whole % 1000) * 1000).padStart(6, '0')}`;
}

/** Orders two Slack timestamps ("1712345678.000100"): seconds, then the six-digit fraction. */
export function compareTs(a: string, b: string): number {
  const [aSec = '', aFrac = ''] = a.split('.');
  const [bSec = '', bFrac = ''] = b.split('.');
  if (aSec.length !== bSec.length) return aSec.length - bSec.length;
  if (aSec !== bSec) return aSec < bSec ? -1 : 1;
  return aFrac < bFrac ? -1 : aFrac > bFrac ? 1 : 0;
}

/** A conversation's key: the channel, or the channel and its thread's root. */
export function conversationKey(channel: string, threadTs: string | undefined): string {
  return threadTs === undefined ? channel : `${channel}/${threadTs}`;
}

export function parseConversationKey(key: string): { channel: string; threadTs: string | undefined } {
  const [channel = '', threadTs] = key.split('/');
  return { channel, threadTs };
}

export class ConversationPositions {
  private conversations: Record<string, string>;
  /** When Homing started listening (SINCE_MARGIN_MS early): a conversation without a position starts here. */
  readonly since: string;

  constructor(
    private readonly file: string,
    logger: Logger,
    now: number = Date.now(),
  ) {
    const loaded = existsSync(file)
      ? readJsonOrMoveAside(file, stateSchema, (movedTo) =>
          logger.error('slack: the saved conversation positions could not be read; moved them aside (messages sent while Homing was away are not fetched)', { movedTo }),
        )
      : undefined;
    this.conversations = loaded?.conversations ?? {};
    this.since = loaded?.since ?? tsAt(now - SINCE_MARGIN_MS);
    if (loaded === undefined) this.write(this.conversations);
  }

  static forBot(dataDir: string, teamId: string, botUserId: string, logger: Logger, now?: number): ConversationPositions {
    const dir = join(dataDir, 'slack');
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    return new ConversationPositions(join(dir, `${teamId}-${botUserId}.json`), logger, now);
  }

  /** Conversations with a position, most recently active first. */
  known(): string[] {
    return Object.entries(this.conversations)
      .sort(([, a], [, b]) => compareTs(b, a))
      .map(([key]) => key);
  }

  last(key: string): string {
    return this.conversations[key] ?? this.since;
  }

  has(key: string): boolean {
    return this.conversations[key] !== undefined;
  }

  /** Whether this message was taken already (at or before the conversation's position). */
  seen(key: string, ts: string): boolean {
    return compareTs(ts, this.last(key)) <= 0;
  }

  /** The message is saved (or needs nothing): it is never taken again. */
  advance(key: string, ts: string): void {
    if (this.has(key) && this.seen(key, ts)) return;
    const next = { ...this.conversations, [key]: ts };
    const keys = Object.keys(next);
    if (keys.length > MAX_CONVERSATIONS) {
      for (const old of keys.sort((a, b) => compareTs(next[a]!, next[b]!)).slice(0, keys.length - MAX_CONVERSATIONS)) delete next[old];
    }
    this.write(next);
  }

  /** The bot cannot read the conversation any more (archived, removed): it is no longer caught up. */
  forget(key: string): void {
    if (!this.has(key)) return;
    const { [key]: _gone, ...rest } = this.conversations;
    this.write(rest);
  }

  private write(conversations: Record<string, string>): void {
    this.conversations = conversations;
    writePrivateFile(this.file, JSON.stringify({ v: 1, since: this.since, conversations }) + '\n');
  }
}
