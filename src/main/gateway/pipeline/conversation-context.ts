import { readFileSync } from 'node:fs';
import type { SessionSummary } from '../../../shared/api';
import type { ChatKind, ConversationContext, TurnMessage } from '../agents/agent';

/**
 * The ConversationContext of one turn, from what Homing stores: the session's
 * platform, chat kind, chat pseudonym and title (the index), and the message's
 * sender (its transcript line: pseudonym and display name). Nothing raw: the
 * index holds raw ids only in the delivery address, which is never read here.
 */

const CHAT_KINDS: Record<SessionSummary['chatType'], ChatKind> = {
  direct: 'dm',
  group: 'group',
  channel: 'channel',
  thread: 'thread',
};

export function conversationContext(
  session: Pick<SessionSummary, 'platform' | 'chatType' | 'chat' | 'title'>,
  message: TurnMessage,
  at: number,
  extra: { readonly timeZone?: string | undefined; readonly instructions?: string | undefined } = {},
): ConversationContext {
  const chatKind = CHAT_KINDS[session.chatType];
  const zone = extra.timeZone ?? localTimeZone();
  return {
    platform: session.platform,
    chatKind,
    chat: session.chat,
    // A direct chat's title is the peer's name: the sender already says it.
    ...(chatKind !== 'dm' && session.title ? { chatTitle: session.title } : {}),
    ...(message.sender ? { sender: message.sender } : {}),
    localTime: localTime(at, zone),
    timeZone: `${zone} (UTC${utcOffset(at, zone)})`,
    ...(extra.instructions ? { instructions: extra.instructions } : {}),
  };
}

/** The machine's time zone, resolved again only when TZ changes (resolving it builds a formatter: ~0.1 ms a turn). */
export function localTimeZone(): string {
  const tz = process.env.TZ;
  if (!resolvedZone || resolvedZone.tz !== tz) resolvedZone = { tz, zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' };
  return resolvedZone.zone;
}
let resolvedZone: { readonly tz: string | undefined; readonly zone: string } | undefined;

/** Formatters by time zone: building one costs more than the turn's other context together. */
const clockFormats = new Map<string, Intl.DateTimeFormat>();
const offsetFormats = new Map<string, Intl.DateTimeFormat>();

function formatFor(cache: Map<string, Intl.DateTimeFormat>, zone: string, make: () => Intl.DateTimeFormat): Intl.DateTimeFormat {
  let format = cache.get(zone);
  if (!format) {
    format = make();
    cache.set(zone, format);
  }
  return format;
}

/** `2026-12-02 01:13 (Wednesday)` in `zone`. */
export function localTime(at: number, zone: string): string {
  const format = formatFor(
    clockFormats,
    zone,
    () =>
      new Intl.DateTimeFormat('en-GB', {
        timeZone: zone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        weekday: 'long',
        hourCycle: 'h23',
      }),
  );
  const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((part) => [part.type, part.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} (${parts.weekday})`;
}

/** `+01:00`, `-05:30`, `+00:00`. */
export function utcOffset(at: number, zone: string): string {
  const name = formatFor(offsetFormats, zone, () => new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }))
    .formatToParts(new Date(at))
    .find((part) => part.type === 'timeZoneName')?.value;
  const match = /GMT([+-]\d{2}:\d{2})/.exec(name ?? '');
  return match ? match[1]! : '+00:00';
}

/** The owner's instructions file is read per turn (edits apply at once), up to this size. */
export const MAX_INSTRUCTIONS_BYTES = 64 * 1024;

/**
 * `instructions.md` in the data directory, if there is one: its text (cut at
 * MAX_INSTRUCTIONS_BYTES), or undefined when it is missing, empty or unreadable.
 */
export function readInstructions(path: string): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  const text = bytes.subarray(0, MAX_INSTRUCTIONS_BYTES).toString('utf8').replace(/\uFFFD$/, '').trim();
  return text === '' ? undefined : text;
}
