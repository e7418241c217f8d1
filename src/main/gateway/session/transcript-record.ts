import { z } from 'zod';
import { mediaRefSchema, MAX_MEDIA_PER_MESSAGE } from '../media/media';
import { CHAT_TYPES } from './source';

/**
 * One line of a transcript (`sessions/<id>.jsonl`). The first line describes
 * the session, so a transcript can be read without the database; every other
 * line is a turn. People appear as pseudonym plus display name, never by raw id.
 */
export const TRANSCRIPT_VERSION = 1;

const headerSchema = z.object({
  type: z.literal('session'),
  v: z.literal(TRANSCRIPT_VERSION),
  sessionId: z.string(),
  sessionKey: z.string(),
  createdAt: z.number(),
  platform: z.string(),
  chatType: z.enum(CHAT_TYPES),
  /** The chat's pseudonym (`<platform>:<12 hex>`). */
  chat: z.string(),
});

const userTurnSchema = z.object({
  type: z.literal('user'),
  at: z.number(),
  /** The inbound message's id on the platform (the ledger keys obligations by it). */
  messageRef: z.string().optional(),
  sender: z.object({ id: z.string(), name: z.string().optional() }),
  /** A schedule's prompt, not a person's message (schedules/scheduler.ts): which schedule, in words. */
  scheduled: z.object({ id: z.number(), name: z.string(), when: z.string() }).optional(),
  text: z.string(),
  /** Photos, voice notes and files the message carried: references (media/media.ts), never bytes. */
  media: z.array(mediaRefSchema).max(MAX_MEDIA_PER_MESSAGE).optional(),
});

const assistantTurnSchema = z.object({
  type: z.literal('assistant'),
  at: z.number(),
  /** The delivery obligation that carries this reply. */
  obligationId: z.string(),
  /** The user turn's messageRef this answers. */
  replyTo: z.string().optional(),
  /**
   * Homing's own words, not the agent's (a command's answer, a reset note): shown
   * and delivered like any reply, but left out of what the agent is shown.
   */
  notice: z.boolean().optional(),
  text: z.string(),
});

/**
 * Older turns condensed by the agent when the conversation outgrew its context
 * budget. It stands for every turn before it, except the turns from `keepFrom`
 * on (kept word for word; `u:<messageRef>` or `a:<obligationId>`), and the
 * agent is shown it in their place. Not a message: recovery and counters skip it.
 * `keepFrom` is the turn right after the last one its request carried, so the
 * next load starts exactly there (context-fit.ts).
 */
const summaryTurnSchema = z.object({
  type: z.literal('summary'),
  at: z.number(),
  keepFrom: z.string().optional(),
  /** How many messages it stands for: the previous summary's and the ones its request carried. */
  covers: z.number().int().min(0),
  /** The messages its request carried (with the previous summary): the first and the last, in transcript order, and how many. */
  carried: z.object({ from: z.string(), through: z.string(), count: z.number().int().min(1) }).optional(),
  /** Of the messages it stands for, how many the agent was shown cut (too long for the budget). */
  cut: z.number().int().min(0).optional(),
  /** The agent's summary was still too long after condensing it again, so its end was cut. */
  trimmed: z.boolean().optional(),
  text: z.string(),
});

export const transcriptRecordSchema = z.discriminatedUnion('type', [headerSchema, userTurnSchema, assistantTurnSchema, summaryTurnSchema]);

export type TranscriptHeader = z.infer<typeof headerSchema>;
export type UserTurn = z.infer<typeof userTurnSchema>;
export type AssistantTurn = z.infer<typeof assistantTurnSchema>;
export type SummaryTurn = z.infer<typeof summaryTurnSchema>;
export type Turn = UserTurn | AssistantTurn;
export type TranscriptRecord = z.infer<typeof transcriptRecordSchema>;

/** A message (user or assistant); the header and summaries are not. */
export function isTurn(record: TranscriptRecord): record is Turn {
  return record.type === 'user' || record.type === 'assistant';
}

/** How a summary's `keepFrom` names a turn. */
export function turnIdentity(turn: Turn): string | undefined {
  if (turn.type === 'assistant') return `a:${turn.obligationId}`;
  return turn.messageRef === undefined ? undefined : `u:${turn.messageRef}`;
}

/** One complete line, newline included. */
export function formatRecord(record: TranscriptRecord): string {
  return JSON.stringify(record) + '\n';
}

/** A line that is not a record (hand-edited, from a future version) is skipped, not fatal. */
export function parseRecord(line: string): TranscriptRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = transcriptRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
