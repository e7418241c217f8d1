import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';

/**
 * What a chaos run observed, turned into the figures of its report. Pure: the
 * orchestrator (run.ts) collects the records, this decides what they mean, and
 * analyze.test.ts checks the rules on small hand-made streams.
 */

export interface SentRequest {
  readonly id: string;
  readonly from: string;
  /** Where the reply must arrive: the channel, or the sender's nick for a DM. */
  readonly conversation: string;
  /** Reply lines expected (1 for a short request). */
  readonly lines: number;
  readonly sentAt: number;
}

/** A PRIVMSG from the bot as the person it was meant for received it (the channel's observer, or the DM's user). */
export interface BotLine {
  readonly at: number;
  readonly text: string;
}

export interface KillRecord {
  readonly at: number;
  readonly kind: string;
  /** When the next gateway was spawned on the same data directory. */
  readonly restartedAt: number | undefined;
  /** This run's agent processes alive at the kill that were still alive 3 s later. */
  readonly orphans: number;
}

export interface LedgerRow {
  readonly state: string;
  readonly preview: string;
  readonly chatId: string;
  readonly nextAttemptAt: number | null;
  readonly abandonReason: string | null;
  readonly lastError: string | null;
}

export interface RunRecords {
  readonly requests: readonly SentRequest[];
  /** Per conversation, the bot's lines in the order they arrived. */
  readonly streams: ReadonlyMap<string, readonly BotLine[]>;
  /** Request id → when IRC handed it to the bot (only those handed early enough to count, see run.ts). */
  readonly handed: ReadonlyMap<string, number>;
  /** Request id → its place in the order IRC handed requests to the bot. */
  readonly handedOrder: ReadonlyMap<string, number>;
  /** Request ids with a user turn in a transcript, and how many user turns each has. */
  readonly reached: ReadonlyMap<string, number>;
  readonly kills: readonly KillRecord[];
  readonly serverRestarts: number;
  readonly abandonedRows: readonly LedgerRow[];
  readonly failedRows: readonly LedgerRow[];
  /** Rows still pending or attempting after the drain. */
  readonly owedAtEnd: number;
  /** Conversations whose observer was out of the channel while the bot could send (their figures may be off). */
  readonly observerGaps: number;
  /** Per gateway start, ms from spawn to the URL it prints. */
  readonly bootTimes: readonly number[];
  /** Request id → when the ledger recorded its reply (absent: not known, e.g. during the drain). */
  readonly recorded?: ReadonlyMap<string, number>;
}

export interface TakeoverFigures {
  /** Restarts after which an owed reply's line arrived before the next kill: ms from the restart to the first one. */
  readonly samples: readonly number[];
  /** Restarts with owed replies none of which arrived before the next kill: the lower bound (ms) of each. */
  readonly censored: readonly number[];
  /** Per restart, ms until every owed reply had started arriving (where all did before the next kill). */
  readonly allStarted: readonly number[];
}

export interface ChaosFigures {
  readonly sent: number;
  readonly handedToHoming: number;
  readonly reachedHoming: number;
  readonly lostBeforeSaved: number;
  readonly answeredExactlyOnce: number;
  readonly answeredWithMarkedRepeats: number;
  readonly answeredWithUnmarkedRepeats: number;
  readonly told: number;
  readonly lostAfterReaching: number;
  readonly lostPartly: number;
  readonly repeatsMarked: number;
  readonly repeatsUnmarked: number;
  readonly misorderedWithinReply: number;
  readonly misorderedAcrossReplies: number;
  readonly misrouted: number;
  readonly abandoned: number;
  readonly failedForGood: number;
  readonly deliverableAbandoned: number;
  readonly owedAtEnd: number;
  /** Replies the ledger owed at a kill: how soon after the restart they flow again. */
  readonly takeover: TakeoverFigures;
  /** Messages that had reached Homing at a kill, answered or not (includes re-running their agent turn). */
  readonly messagesFlowing: TakeoverFigures;
  readonly orphans: number;
  readonly kills: number;
  readonly serverRestarts: number;
  readonly duplicateUserTurns: number;
  readonly otherBotLines: number;
  readonly observerGaps: number;
  readonly bootTimes: readonly number[];
  /** Ids behind the non-zero failure figures (a few of each), to start a diagnosis. */
  readonly examples: Readonly<Record<string, readonly string[]>>;
}

const REPLY_LINE = /^(req-\d+) line (\d+)\/(\d+)(?:\s|$)/;
const REQUEST_ID = /\breq-\d+\b/;

export type ParsedBotLine =
  | { readonly kind: 'reply'; readonly id: string; readonly index: number; readonly total: number }
  | { readonly kind: 'marker' }
  /** A line naming a request that is not its reply: Homing saying it could not answer it. */
  | { readonly kind: 'notice'; readonly id: string }
  | { readonly kind: 'other' };

export function parseBotLine(text: string): ParsedBotLine {
  if (text === RESEND_MARKER) return { kind: 'marker' };
  const reply = REPLY_LINE.exec(text);
  if (reply) return { kind: 'reply', id: reply[1]!, index: Number(reply[2]), total: Number(reply[3]) };
  const named = REQUEST_ID.exec(text);
  return named ? { kind: 'notice', id: named[0] } : { kind: 'other' };
}

interface Seen {
  /** Per line index (1-based), the stream positions where it arrived. */
  readonly positions: Map<number, number[]>;
  readonly times: Map<number, number[]>;
  unmarked: number;
  marked: number;
  noticeAt: number | undefined;
  conversation: string;
}

export function analyze(records: RunRecords): ChaosFigures {
  const byId = new Map(records.requests.map((request) => [request.id, request]));
  const seen = new Map<string, Seen>();
  const examples: Record<string, string[]> = {};
  const example = (figure: string, id: string) => {
    const list = (examples[figure] ??= []);
    if (list.length < 5 && !list.includes(id)) list.push(id);
  };
  let misrouted = 0;
  let otherBotLines = 0;

  for (const [conversation, stream] of records.streams) {
    const parsed = stream.map((line) => parseBotLine(line.text));
    for (const [position, line] of parsed.entries()) {
      if (line.kind === 'marker') continue;
      if (line.kind === 'other') {
        otherBotLines++;
        continue;
      }
      const request = byId.get(line.id);
      if (!request || request.conversation !== conversation) {
        misrouted++;
        example('misrouted', line.id);
        continue;
      }
      let entry = seen.get(line.id);
      if (!entry) {
        entry = { positions: new Map(), times: new Map(), unmarked: 0, marked: 0, noticeAt: undefined, conversation };
        seen.set(line.id, entry);
      }
      if (line.kind === 'notice') {
        entry.noticeAt ??= stream[position]!.at;
        continue;
      }
      const earlier = entry.positions.get(line.index) ?? [];
      if (earlier.length > 0) {
        if (isMarkedRepeat(parsed, position)) entry.marked++;
        else {
          entry.unmarked++;
          example('repeats unmarked', line.id);
        }
      }
      entry.positions.set(line.index, [...earlier, position]);
      entry.times.set(line.index, [...(entry.times.get(line.index) ?? []), stream[position]!.at]);
    }
  }

  const complete = (request: SentRequest, entry: Seen | undefined) => {
    if (!entry) return false;
    for (let k = 1; k <= request.lines; k++) if (!entry.positions.has(k)) return false;
    return true;
  };

  let answeredExactlyOnce = 0;
  let answeredWithMarkedRepeats = 0;
  let answeredWithUnmarkedRepeats = 0;
  let told = 0;
  let lostAfterReaching = 0;
  let lostPartly = 0;
  let lostBeforeSaved = 0;
  let repeatsMarked = 0;
  let repeatsUnmarked = 0;
  let misorderedWithinReply = 0;
  let duplicateUserTurns = 0;

  for (const request of records.requests) {
    const entry = seen.get(request.id);
    const reached = records.reached.has(request.id);
    duplicateUserTurns += Math.max(0, (records.reached.get(request.id) ?? 0) - 1);
    if (records.handed.has(request.id) && !reached) {
      lostBeforeSaved++;
      example('lost before saved', request.id);
    }
    if (entry) {
      repeatsMarked += entry.marked;
      repeatsUnmarked += entry.unmarked;
      // Lines of one reply must first arrive in order 1, 2, 3…
      const firsts = [...entry.positions.entries()].sort((a, b) => a[1][0]! - b[1][0]!).map(([index]) => index);
      if (firsts.some((index, i) => i > 0 && index < firsts[i - 1]!)) {
        misorderedWithinReply++;
        example('misordered', request.id);
      }
    }
    if (complete(request, entry)) {
      if (entry!.unmarked > 0) answeredWithUnmarkedRepeats++;
      else if (entry!.marked > 0) answeredWithMarkedRepeats++;
      else answeredExactlyOnce++;
    } else if (entry?.noticeAt !== undefined) {
      told++;
    } else if (reached) {
      lostAfterReaching++;
      if (entry && entry.positions.size > 0) lostPartly++;
      example('lost after reaching Homing', request.id);
    }
  }

  // Replies of one conversation must start arriving in the order IRC handed their requests to Homing.
  let misorderedAcrossReplies = 0;
  const conversations = new Map<string, { order: number; first: number; id: string }[]>();
  for (const request of records.requests) {
    const entry = seen.get(request.id);
    const order = records.handedOrder.get(request.id);
    if (!entry || entry.positions.size === 0 || order === undefined) continue;
    const first = Math.min(...[...entry.positions.values()].map((positions) => positions[0]!));
    const list = conversations.get(request.conversation) ?? [];
    list.push({ order, first, id: request.id });
    conversations.set(request.conversation, list);
  }
  for (const list of conversations.values()) {
    list.sort((a, b) => a.order - b.order);
    const keep = longestIncreasing(list.map((item) => item.first));
    misorderedAcrossReplies += list.length - keep.size;
    list.forEach((item, i) => {
      if (!keep.has(i)) example('misordered', item.id);
    });
  }

  const failedForGood = records.failedRows.filter((row) => row.nextAttemptAt === null);
  const givenUp = [...records.abandonedRows, ...failedForGood];
  // Every chat of a chaos run takes messages (the channel exists, every user comes back),
  // so every reply given up on was deliverable, unless a person discarded it (nobody does here).
  const deliverable = givenUp.filter((row) => !/discard/i.test(row.abandonReason ?? ''));
  for (const row of deliverable) example('abandoned', REQUEST_ID.exec(row.preview)?.[0] ?? row.preview.slice(0, 30));

  const handed = [...records.requests].filter((request) => records.handed.has(request.id)).length;
  const reachedHoming = records.requests.filter((request) => records.reached.has(request.id)).length;

  return {
    sent: records.requests.length,
    handedToHoming: handed,
    reachedHoming,
    lostBeforeSaved,
    answeredExactlyOnce,
    answeredWithMarkedRepeats,
    answeredWithUnmarkedRepeats,
    told,
    lostAfterReaching,
    lostPartly,
    repeatsMarked,
    repeatsUnmarked,
    misorderedWithinReply,
    misorderedAcrossReplies,
    misrouted,
    abandoned: records.abandonedRows.length,
    failedForGood: failedForGood.length,
    deliverableAbandoned: deliverable.length,
    owedAtEnd: records.owedAtEnd,
    takeover: takeover(records, seen, true),
    messagesFlowing: takeover(records, seen, false),
    orphans: records.kills.reduce((sum, kill) => sum + kill.orphans, 0),
    kills: records.kills.length,
    serverRestarts: records.serverRestarts,
    duplicateUserTurns,
    otherBotLines,
    observerGaps: records.observerGaps,
    bootTimes: records.bootTimes,
    examples,
  };
}

/**
 * A line seen before is a marked repeat when the marker line comes right before
 * the run of this reply's consecutive lines that ends with it: the resent chunk
 * is the marker, then the chunk's lines, and the repeated line is one of them.
 */
export function isMarkedRepeat(parsed: readonly ParsedBotLine[], position: number): boolean {
  const line = parsed[position];
  if (line?.kind !== 'reply') return false;
  let expected = line.index - 1;
  for (let q = position - 1; q >= 0; q--) {
    const before = parsed[q]!;
    if (before.kind === 'marker') return true;
    if (before.kind !== 'reply' || before.id !== line.id || before.index !== expected) return false;
    expected--;
  }
  return false;
}

/** Indexes of one longest strictly increasing subsequence (patience sorting). */
export function longestIncreasing(values: readonly number[]): Set<number> {
  const tails: number[] = [];
  const previous = new Array<number>(values.length).fill(-1);
  for (let i = 0; i < values.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (values[tails[mid]!]! < values[i]!) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) previous[i] = tails[lo - 1]!;
    tails[lo] = i;
  }
  const keep = new Set<number>();
  for (let i = tails.at(-1) ?? -1; i >= 0; i = previous[i]!) keep.add(i);
  return keep;
}

/**
 * For each restart after a kill: the replies owed at the kill (their request
 * reached Homing before it, and not every line had arrived), and how long after
 * the restart their lines began to arrive again, up to the next kill.
 */
function takeover(records: RunRecords, seen: ReadonlyMap<string, Seen>, recordedOnly: boolean): TakeoverFigures {
  const samples: number[] = [];
  const censored: number[] = [];
  const allStarted: number[] = [];
  const kills = [...records.kills].sort((a, b) => a.at - b.at);
  for (const [i, kill] of kills.entries()) {
    if (kill.restartedAt === undefined) continue;
    const windowEnd = kills[i + 1]?.at ?? Number.POSITIVE_INFINITY;
    const delays: number[] = [];
    let owed = 0;
    for (const request of records.requests) {
      const arrivedAt = records.handed.get(request.id);
      if (arrivedAt === undefined || arrivedAt >= kill.at || !records.reached.has(request.id)) continue;
      // An owed reply is one the ledger had recorded before the kill; a message whose
      // turn had not finished is re-run first (the agent's time), counted apart.
      if (recordedOnly && records.recorded) {
        const recordedAt = records.recorded.get(request.id);
        if (recordedAt === undefined || recordedAt >= kill.at) continue;
      }
      const entry = seen.get(request.id);
      if (entry?.noticeAt !== undefined && entry.noticeAt < kill.at) continue;
      let doneBefore = true;
      for (let k = 1; k <= request.lines; k++) {
        if (!(entry?.times.get(k) ?? []).some((at) => at < kill.at)) doneBefore = false;
      }
      if (doneBefore) continue;
      owed++;
      const after = [...(entry?.times.values() ?? [])].flat().filter((at) => at >= kill.restartedAt! && at < windowEnd);
      if (entry?.noticeAt !== undefined && entry.noticeAt >= kill.restartedAt && entry.noticeAt < windowEnd) after.push(entry.noticeAt);
      if (after.length > 0) delays.push(Math.min(...after) - kill.restartedAt);
    }
    if (owed === 0) continue;
    if (delays.length === 0) {
      censored.push((Number.isFinite(windowEnd) ? windowEnd : Date.now()) - kill.restartedAt);
      continue;
    }
    samples.push(Math.min(...delays));
    if (delays.length === owed) allStarted.push(Math.max(...delays));
  }
  return { samples, censored, allStarted };
}

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
