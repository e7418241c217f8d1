import type { Clock } from '../clock';
import type { Db } from '../db/database';
import type { Ledger } from '../ledger/ledger';
import type { Logger } from '../logger';
import { toDisplayLine } from '../session/display-text';
import type { SessionStore } from '../session/store';
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
}

export interface Recovery {
  readonly report: RecoveryReport;
  /** Resolves once every recovered turn has been answered (or the user told). */
  readonly answered: Promise<void>;
}

/**
 * At start, finds turns a dead process left unfinished (a user message at the
 * end of a transcript with no reply after it):
 *  - its reply was recorded in the ledger but the crash came before the
 *    transcript line: the line is appended (the sweep delivers the reply);
 *  - otherwise the crash came during the agent's turn: inside the freshness
 *    window it is answered again, once; outside it the user is told.
 * Returns as soon as the turns are queued: each waits in its conversation's
 * queue, so new messages are taken meanwhile and still answered in order.
 */
export function recoverInterruptedTurns(options: RecoveryOptions): Recovery {
  const { sessions, ledger, pipeline, clock, logger, db } = options;
  const since = clock.now() - (options.lookbackMs ?? 24 * 3600_000);
  const alreadyRetried = db.prepare('SELECT 1 FROM pipeline_interrupted_retries WHERE session_id = ? AND message_ref = ?');
  const markRetried = db.prepare(
    'INSERT OR IGNORE INTO pipeline_interrupted_retries (session_id, message_ref, retried_at) VALUES (?, ?, ?)',
  );
  let restored = 0;
  const answers: Promise<TurnOutcome>[] = [];
  let rerun = 0;
  let told = 0;

  for (let page = 1; ; page++) {
    const { sessions: summaries } = sessions.list({ page, pageSize: 100 });
    const recent = summaries.filter((summary) => summary.current && summary.updatedAt >= since);
    for (const summary of recent) {
      const interrupted = sessions.findInterruptedTurn(summary.sessionId);
      const last = interrupted?.turns.at(-1);
      if (!interrupted || !last) continue;
      const address = sessions.deliveryAddress(summary.sessionId);
      if (!address) continue;

      let recorded: ReturnType<Ledger['repliesSince']> = [];
      try {
        recorded = ledger.repliesSince(summary.sessionKey, interrupted.turns[0]!.at);
      } catch (error) {
        logger.error('recovery could not read the ledger', { error });
      }
      if (recorded.length > 0) {
        for (const reply of recorded) {
          if (sessions.findAssistantTurn(summary.sessionId, reply.id)) continue;
          sessions.appendAssistantTurn(summary.sessionId, { obligationId: reply.id, text: reply.content });
          restored++;
        }
        continue;
      }

      const messageRef = last.messageRef ?? `interrupted-${last.at}`;
      const context = turnContext(summary, address, { messageRef, text: last.text });
      const retriedBefore = alreadyRetried.get(summary.sessionId, messageRef) !== undefined;
      if (interrupted.decision === 'auto-continue' && !retriedBefore) {
        markRetried.run(summary.sessionId, messageRef, clock.now());
        logger.info('answering an interrupted turn again', { sessionId: summary.sessionId });
        answers.push(pipeline.retryInterrupted(context));
        rerun++;
      } else {
        const preview = toDisplayLine(last.text, 80);
        answers.push(
          pipeline.tellUser(
            context,
            `⚠ Homing stopped before it could answer your message “${preview}”. Please send it again if you still need an answer.`,
          ),
        );
        told++;
      }
    }
    // Newest first: once the page's last session is older than the window, so is every later one.
    if (summaries.length < 100 || summaries.at(-1)!.updatedAt < since) break;
  }
  return { report: { rerun, told, restored }, answered: Promise.all(answers).then(() => undefined) };
}
