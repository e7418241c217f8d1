import type { Clock } from '../clock';
import type { Db } from '../db/database';
import type { Ledger } from '../ledger/ledger';
import type { Logger } from '../logger';
import { decideInterrupted } from '../session/continuation';
import { toDisplayLine } from '../session/display-text';
import type { SessionStore } from '../session/store';
import type { Turn, UserTurn } from '../session/transcript-record';
import { turnContext, type Pipeline, type TurnOutcome } from './pipeline';

export interface RecoveryReport {
  /** Interrupted turns answered again (inside the freshness window). */
  readonly rerun: number;
  /** Users told their message was interrupted (outside the window, or already re-run once). */
  readonly told: number;
  /** Recorded replies whose transcript line the crash cut off, appended now. */
  readonly restored: number;
}

export interface RecoveryOptions {
  readonly db: Db;
  readonly sessions: SessionStore;
  readonly ledger: Ledger;
  readonly pipeline: Pipeline;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Conversations active this recently are checked (default 24 h). */
  readonly lookbackMs?: number;
  /** Turns read from the end of each transcript (default 200). */
  readonly tailTurns?: number;
  /**
   * The last gateway may have died with the machine (Ledger.tookOver): its
   * newest unfsynced commits may be lost, so every recent transcript is read
   * instead of the conversations the index counts as waiting.
   */
  readonly powerLoss?: boolean;
}

export interface Recovery {
  readonly report: RecoveryReport;
  /** Resolves once every recovered turn has been answered (or the user told). */
  readonly answered: Promise<void>;
}

/**
 * At start, finds messages a dead process saved but never answered. Messages
 * are saved on arrival, so a conversation may hold several unanswered ones, not
 * only at its end. Only the conversations the session index counts as waiting
 * are read (SessionStore.waitingSince; every recent one after a possible power
 * cut), and each one's count is set to what its transcript says. Each waiting
 * message is, oldest first per conversation:
 *  - answered already in the ledger (the crash came between recording the
 *    reply and its transcript line): the line is appended; the outbox sends it;
 *  - otherwise inside the freshness window: answered again, once;
 *  - otherwise (too old, or re-run once already): the user is told.
 * Returns as soon as the turns are queued: each waits in its conversation's
 * queue, in order, so new messages are taken meanwhile and answered after them.
 */
export function recoverInterruptedTurns(options: RecoveryOptions): Recovery {
  const { sessions, ledger, pipeline, clock, logger, db } = options;
  const now = clock.now();
  const since = now - (options.lookbackMs ?? 24 * 3600_000);
  const alreadyRetried = db.prepare('SELECT 1 FROM pipeline_interrupted_retries WHERE session_id = ? AND message_ref = ?');
  const markRetried = db.prepare(
    'INSERT OR IGNORE INTO pipeline_interrupted_retries (session_id, message_ref, retried_at) VALUES (?, ?, ?)',
  );
  let restored = 0;
  let rerun = 0;
  let told = 0;
  const answers: Promise<TurnOutcome>[] = [];

  for (const summary of sessions.waitingSince(since, { powerLoss: options.powerLoss ?? false })) {
    let turns: Turn[];
    let address: ReturnType<SessionStore['deliveryAddress']>;
    try {
      address = sessions.deliveryAddress(summary.sessionId);
      turns = sessions.loadContext(summary.sessionId, { maxTurns: options.tailTurns ?? 200 }).turns;
    } catch (error) {
      // One unreadable conversation must not keep the others unanswered.
      logger.error('recovery could not read a conversation; skipped', { sessionId: summary.sessionId, error });
      continue;
    }
    // After a power cut a reply's transcript line can outlive its record (see withoutLostReplies).
    const waiting = unanswered(options.powerLoss ? withoutLostReplies(turns, ledger) : turns);
    // The true count; each reply appended from here on (restored or answered) counts itself down.
    sessions.noteUnanswered(summary.sessionId, address ? waiting.length : 0);
    if (!address) continue;
    for (const message of waiting) {
      const messageRef = message.messageRef ?? `interrupted-${message.at}`;
      if (pipeline.isInHand(summary.sessionId, messageRef)) continue;
      let recorded: { id: string; content: string } | undefined;
      try {
        recorded = ledger.replyFor(summary.sessionKey, messageRef);
      } catch (error) {
        logger.error('recovery could not read the ledger', { error });
        continue;
      }
      if (recorded) {
        if (!sessions.findAssistantTurn(summary.sessionId, recorded.id)) {
          sessions.appendAssistantTurn(summary.sessionId, { obligationId: recorded.id, text: recorded.content, replyTo: messageRef });
          restored++;
        }
        continue;
      }
      const context = turnContext(summary, address, { messageRef, text: message.text });
      const retriedBefore = alreadyRetried.get(summary.sessionId, messageRef) !== undefined;
      const fresh = decideInterrupted(message.at, now, sessions.freshnessWindowSeconds) === 'auto-continue';
      if (fresh && !retriedBefore) {
        markRetried.run(summary.sessionId, messageRef, now);
        logger.info('answering an interrupted turn again', { sessionId: summary.sessionId });
        answers.push(pipeline.retryInterrupted(context));
        rerun++;
      } else {
        const preview = toDisplayLine(message.text, 80);
        answers.push(
          pipeline.tellUser(
            context,
            `⚠ Homing stopped before it could answer your message “${preview}”. Please send it again if you still need an answer.`,
          ),
        );
        told++;
      }
    }
  }
  return { report: { rerun, told, restored }, answered: Promise.all(answers).then(() => undefined) };
}

/**
 * How far before a transcript's newest line a reply's record can have been
 * lost with a power cut. Only the commits after the last fdatasync of the
 * ledger's log can be (milliseconds before the cut); a reply's line is written
 * right after its commit, so only the lines of the last moments are checked —
 * not a reply the ledger could not record and that was sent anyway (best
 * effort) long before.
 */
export const LOST_REPLY_WINDOW_MS = 60_000;

/**
 * `turns` without the replies whose record the ledger does not have. A reply's
 * line is appended once its record is committed, which is before that commit
 * is fsynced (the send waits for the disk, the transcript does not): a power
 * cut in between can keep the line and lose the record. Nothing of such a
 * reply was sent, so its message is unanswered and is answered again; the
 * stale line stays in the transcript.
 */
export function withoutLostReplies(turns: readonly Turn[], ledger: Pick<Ledger, 'getDelivery'>): Turn[] {
  const newest = turns.at(-1)?.at ?? 0;
  return turns.filter(
    (turn) => turn.type !== 'assistant' || turn.at < newest - LOST_REPLY_WINDOW_MS || ledger.getDelivery(turn.obligationId) !== undefined,
  );
}

/**
 * User messages in `turns` (oldest first) that got no reply. A reply names the
 * message it answers (`replyTo`); a reply without one (written by an older
 * Homing) answers everything before it.
 */
export function unanswered(turns: readonly Turn[]): UserTurn[] {
  const answered = new Set<string>();
  let lastUnnamedReply = -1;
  turns.forEach((turn, index) => {
    // Homing's aside before an answer (a reset note) answers nothing.
    if (turn.type !== 'assistant' || (turn.notice && turn.replyTo === undefined)) return;
    if (turn.replyTo !== undefined) answered.add(turn.replyTo);
    else lastUnnamedReply = index;
  });
  return turns.filter(
    (turn, index): turn is UserTurn =>
      turn.type === 'user' && index > lastUnnamedReply && (turn.messageRef === undefined || !answered.has(turn.messageRef)),
  );
}
