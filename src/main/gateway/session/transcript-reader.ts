import { readLinesBackward, readLinesForward, readLinesForwardSliced } from './transcript-file';
import {
  isTurn,
  parseRecord,
  turnIdentity,
  type AssistantTurn,
  type SummaryTurn,
  type TranscriptHeader,
  type Turn,
  type UserTurn,
} from './transcript-record';

export interface ContextLimits {
  /** The most recent turns to return (default 50). */
  readonly maxTurns?: number;
  /** A budget on the returned turns' text, in UTF-16 code units (default: none). */
  readonly maxChars?: number;
}

export interface LoadedContext {
  /** Oldest first. */
  readonly turns: Turn[];
  /** Older turns exist that the limits left out. */
  readonly truncated: boolean;
  readonly bytesRead: number;
}

export const DEFAULT_CONTEXT_TURNS = 50;

/**
 * The last turns of a transcript, read from its end: the cost follows the size
 * of what is returned, not the length of the conversation. The budget is
 * strict: a turn that does not fit ends the context there.
 */
export function readContext(path: string, limits: ContextLimits = {}): LoadedContext {
  const maxTurns = Math.max(0, limits.maxTurns ?? DEFAULT_CONTEXT_TURNS);
  const maxChars = limits.maxChars ?? Infinity;
  const turns: Turn[] = [];
  let chars = 0;
  let truncated = false;
  const { bytesRead } = readLinesBackward(path, (line) => {
    const record = parseRecord(line);
    if (!record || record.type === 'summary') return true;
    if (!isTurn(record)) return false; // the header: the start of the session
    if (turns.length >= maxTurns || chars + record.text.length > maxChars) {
      truncated = true;
      return false;
    }
    chars += record.text.length;
    turns.push(record);
    return true;
  });
  return { turns: turns.reverse(), truncated, bytesRead };
}

export interface AgentContext {
  /** Oldest first: the turns the latest summary did not condense (all of them when there is none). */
  readonly turns: Turn[];
  /** The latest summary, when older turns were condensed. */
  readonly summary: SummaryTurn | undefined;
  /** Older turns exist that `maxTurns` left out (and no summary stands for them). */
  readonly truncated: boolean;
}

/**
 * What the agent may be shown, read from the end: the turns since the latest
 * summary, plus those it kept word for word (up to its `keepFrom` turn), and
 * the summary itself. At most `maxTurns` turns.
 */
export function readAgentContext(path: string, maxTurns: number): AgentContext {
  const turns: Turn[] = [];
  let summary: SummaryTurn | undefined;
  let truncated = false;
  readLinesBackward(path, (line) => {
    const record = parseRecord(line);
    if (!record) return true;
    if (record.type === 'summary') {
      // An older summary, written after turns the latest one kept (summaries are
      // appended at the end): reading goes on to the latest one's keepFrom.
      if (summary) return true;
      summary = record;
      return record.keepFrom !== undefined;
    }
    if (!isTurn(record)) return false;
    if (turns.length >= maxTurns) {
      truncated = true;
      return false;
    }
    turns.push(record);
    // The first kept turn reached: everything before it is in the summary.
    return !(summary && turnIdentity(record) === summary.keepFrom);
  });
  return { turns: turns.reverse(), summary, truncated: truncated && !summary };
}

/**
 * The user turns after the last assistant turn (oldest first): messages that
 * were never answered, at most `limit` of them.
 */
export function readUnansweredTail(path: string, limit = 20): UserTurn[] {
  const turns: UserTurn[] = [];
  readLinesBackward(path, (line) => {
    const record = parseRecord(line);
    // A summary, or Homing's aside before an answer (a reset note), answers nothing.
    if (!record || record.type === 'summary' || (record.type === 'assistant' && record.notice && record.replyTo === undefined)) return true;
    if (record.type !== 'user') return false;
    turns.push(record);
    return turns.length < limit;
  });
  return turns.reverse();
}

/** The assistant turn carrying `obligationId`, searched among the last `searchTurns` turns. */
export function findAssistantTurn(path: string, obligationId: string, searchTurns = 200): AssistantTurn | undefined {
  let found: AssistantTurn | undefined;
  let seen = 0;
  readLinesBackward(path, (line) => {
    const record = parseRecord(line);
    if (!record || record.type === 'summary') return true;
    if (!isTurn(record)) return false;
    if (record.type === 'assistant' && record.obligationId === obligationId) {
      found = record;
      return false;
    }
    return ++seen < searchTurns;
  });
  return found;
}

export interface TurnPage {
  readonly header: TranscriptHeader | undefined;
  /** Messages and summaries, in file order. */
  readonly turns: (Turn | SummaryTurn)[];
  readonly totalTurns: number;
}

/** Page `page` (0 = oldest) of `pageSize` turns, plus the total count; reads the whole file. */
export function readTurnPage(path: string, page: number, pageSize: number): TurnPage {
  const { visit, result } = turnPageVisitor(page, pageSize);
  readLinesForward(path, visit);
  return result();
}

/** `readTurnPage` in slices of the file, yielding to the event loop between them (for the window's pages). */
export async function readTurnPageSliced(path: string, page: number, pageSize: number): Promise<TurnPage> {
  const { visit, result } = turnPageVisitor(page, pageSize);
  await readLinesForwardSliced(path, visit);
  return result();
}

function turnPageVisitor(page: number, pageSize: number): { visit: (line: string) => boolean; result: () => TurnPage } {
  const first = page * pageSize;
  const turns: (Turn | SummaryTurn)[] = [];
  let header: TranscriptHeader | undefined;
  let index = 0;
  const visit = (line: string): boolean => {
    const record = parseRecord(line);
    if (!record) return true;
    if (record.type === 'session') {
      header ??= record;
      return true;
    }
    if (index >= first && index < first + pageSize) turns.push(record);
    index++;
    return true;
  };
  return { visit, result: () => ({ header, turns, totalTurns: index }) };
}
