import { mkdirSync, statSync } from 'node:fs';
import type { MediaRef } from '../media/media';
import type { CommitGroup } from '../db/commit-group';
import type { GatewayEvent, SessionChange, SessionSummary } from '../../../shared/api';
import { systemClock, type Clock } from '../clock';
import type { Db } from '../db/database';
import { silentLogger, type Logger } from '../logger';
import {
  decideInterrupted,
  defaultContinuationPolicy,
  resetPolicyFor,
  staleReason,
  type ContinuationPolicy,
  type InterruptedDecision,
  type ResetReason,
} from './continuation';
import { MAX_PREVIEW, sanitizeDisplayName, toDisplayLine } from './display-text';
import { LOCAL_PLATFORM_NAME } from '../../../shared/platforms';
import type { Pseudonymiser } from './pseudonyms';
import { createSessionIdSource, type SessionIdSource } from './session-id';
import type { DeliveryAddress, WaitingChange } from './session-index';
import { createSessionKeyBuilder, type SessionKeyOptions } from './session-key';
import { SessionNotFoundError, SessionReader } from './session-reader';
import type { SessionSource } from './source';
import { repairTornTail, TranscriptFiles } from './transcript-file';
import {
  findAssistantTurn,
  readAgentContext,
  readContext,
  readUnansweredTail,
  type AgentContext,
  type ContextLimits,
  type LoadedContext,
} from './transcript-reader';
import { formatRecord, TRANSCRIPT_VERSION, type AssistantTurn, type SummaryTurn, type TranscriptRecord, type UserTurn } from './transcript-record';

/** A summary to append: the record without its time. */
export type NewSummary = Omit<SummaryTurn, 'type' | 'at'>;

export interface SessionStoreOptions {
  readonly db: Db;
  readonly dataDir: string;
  readonly pseudonyms: Pseudonymiser;
  readonly keys?: Omit<SessionKeyOptions, 'pseudonyms'>;
  readonly policy?: ContinuationPolicy;
  readonly clock?: Clock;
  readonly newSessionId?: SessionIdSource;
  readonly logger?: Logger;
  readonly onEvent?: (event: Extract<GatewayEvent, { type: 'session.updated' }>) => void;
  /** The gateway's group commit: the index's counters join it (default: written at once). */
  readonly group?: CommitGroup;
}

export type ResolveStatus = 'new' | 'continued' | 'reset';

export interface ResolvedSession {
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly status: ResolveStatus;
  /** Why the previous session ended (status `reset` only). */
  readonly resetReason?: ResetReason;
  /** The session this one replaced (status `reset` only); its transcript stays readable. */
  readonly previousSessionId?: string;
}

export interface InterruptedTurn {
  readonly sessionId: string;
  /** The user turns after the last reply, oldest first. */
  readonly turns: readonly UserTurn[];
  readonly ageMs: number;
  /** Inside the freshness window: answer it now; outside: tell the user instead. */
  readonly decision: InterruptedDecision;
}

/**
 * The gateway's sessions: routes a source to its conversation, and writes and
 * reads transcripts. It is the only writer of `sessions/`. When `append…Turn`
 * returns, the line is written (it survives kill -9); a user line is also
 * fdatasynced, off the event loop, and `whenDurable` says when it is on disk
 * (it survives a power cut from then on). An assistant line needs no fsync of
 * its own: the ledger row holds the reply, and recovery appends the line again
 * if it was lost.
 *
 * Write order for a user line: the session's `unanswered` count first (a
 * committed write: it survives a kill), then the line, then the counters and
 * preview (in the next group commit). A crash leaves the index counting a
 * message as unanswered that the transcript may not hold — recovery reads the
 * transcript and corrects it — never a saved message the index does not know
 * is waiting. The transcript is the record.
 *
 * Recovery only needs the count to be above zero, not exact, so a busy
 * conversation pays that commit once, not once a message: while this process
 * knows the committed count is up (`waiting`) and nothing it queued can bring
 * it down, the next user line is written without a commit of its own, and
 * answers leave the count as it is. It is cleared, in the answer's group
 * commit, once every message this process knows of has its answer. A session
 * is marked again (a commit) at least every REMARK_MS, so its `updated_at`
 * stays inside recovery's look-back even when its counters' commit was lost.
 */
export class SessionStore extends SessionReader {
  private readonly pseudonyms: Pseudonymiser;
  private readonly keyFor: (source: SessionSource) => string;
  private readonly policy: ContinuationPolicy;
  private readonly clock: Clock;
  private readonly newSessionId: SessionIdSource;
  private readonly logger: Logger;
  private readonly onEvent: SessionStoreOptions['onEvent'];
  /** Transcripts whose tail this process has checked; its own appends leave them whole. */
  private readonly checked = new Set<string>();
  private readonly files = new TranscriptFiles();
  private readonly group: CommitGroup | undefined;
  /** Sessions whose row this process has read: they exist (none is ever deleted). */
  private readonly known = new Set<string>();
  /** Each session's latest user line on its way to disk. */
  private readonly syncing = new Map<string, Promise<void>>();
  /**
   * Sessions whose committed `unanswered` count this process knows is above
   * zero and keeps there, with how many of their messages wait for an answer
   * as far as this process knows (see the class comment).
   */
  private readonly waiting = new Map<string, WaitingMark>();

  constructor(options: SessionStoreOptions) {
    super(options.db, options.dataDir);
    this.pseudonyms = options.pseudonyms;
    this.keyFor = createSessionKeyBuilder({ ...options.keys, pseudonyms: options.pseudonyms });
    this.policy = options.policy ?? defaultContinuationPolicy;
    this.clock = options.clock ?? systemClock;
    this.newSessionId = options.newSessionId ?? createSessionIdSource(this.clock);
    this.logger = options.logger ?? silentLogger;
    this.onEvent = options.onEvent;
    this.group = options.group;
    mkdirSync(this.sessionsDir, { recursive: true, mode: 0o700 });
  }

  sessionKeyFor(source: SessionSource): string {
    return this.keyFor(source);
  }

  /**
   * A message's platform reference as transcripts and the ledger keep it: a
   * pseudonym (a platform's ref names its chat: `tg:<chat id>:<message id>`).
   * The local chat's refs are Homing's own and stay as they are.
   */
  messageRefFor(platform: string, messageRef: string): string {
    return platform === LOCAL_PLATFORM_NAME ? messageRef : this.pseudonyms.message(platform, messageRef);
  }

  /**
   * The conversation a message from `source` belongs to: the key's current
   * session, or a new one if there is none or the reset policy says the
   * current one went stale.
   */
  resolve(source: SessionSource): ResolvedSession {
    const sessionKey = this.keyFor(source);
    const now = this.clock.now();
    const found = this.index.currentWithAddress(sessionKey);
    if (!found) return this.begin(source, sessionKey, now, undefined);
    const { session: current } = found;
    const stale = staleReason(current.lastMessageAt ?? current.createdAt, now, resetPolicyFor(this.policy, source.chatType));
    if (stale) return this.begin(source, sessionKey, now, { sessionId: current.sessionId, reason: stale });
    // The latest message says where replies go now (per-peer sessions span platforms). Most
    // messages come from where the last one did: a write that changes nothing still takes the
    // database's write lock, so the row just read decides whether to write.
    const address = addressOf(source);
    const title = titleOf(source);
    if (JSON.stringify(address) !== found.address || (title !== null && title !== current.title)) {
      this.index.updateAddress(current.sessionId, address, title);
    }
    return { sessionKey, sessionId: current.sessionId, status: 'continued' };
  }

  /** `/new` or `/reset` from the chat: a new session id for the key; the old transcript stays. */
  startNewSession(source: SessionSource): ResolvedSession {
    const sessionKey = this.keyFor(source);
    const current = this.index.current(sessionKey);
    const previous = current ? { sessionId: current.sessionId, reason: 'command' as const } : undefined;
    return this.begin(source, sessionKey, this.clock.now(), previous);
  }

  appendUserTurn(sessionId: string, turn: { source: SessionSource; text: string; messageRef?: string; media?: readonly MediaRef[] }): UserTurn {
    const { source } = turn;
    const senderId = source.senderId !== undefined ? this.pseudonyms.person(source.platform, source.senderId) : undefined;
    const name = sanitizeDisplayName(source.senderName);
    const record: UserTurn = {
      type: 'user',
      at: this.clock.now(),
      ...(turn.messageRef !== undefined ? { messageRef: turn.messageRef } : {}),
      sender: { id: senderId ?? this.pseudonyms.chat(source.platform, source.chatId), ...(name ? { name } : {}) },
      text: turn.text,
      ...(turn.media && turn.media.length > 0 ? { media: [...turn.media] } : {}),
    };
    this.append(sessionId, record);
    return record;
  }

  /**
   * A schedule's prompt, saved like a message (durable before its turn starts,
   * found by recovery when the turn was cut short). The agent is shown it as
   * the schedule's, not as a person's.
   */
  appendScheduledTurn(sessionId: string, turn: { text: string; messageRef: string; schedule: { id: number; name: string; when: string } }): UserTurn {
    const { schedule } = turn;
    const record: UserTurn = {
      type: 'user',
      at: this.clock.now(),
      messageRef: turn.messageRef,
      sender: { id: `schedule:${schedule.id}`, name: `Schedule “${schedule.name}” (${schedule.when})` },
      scheduled: { id: schedule.id, name: schedule.name, when: schedule.when },
      text: turn.text,
    };
    this.append(sessionId, record);
    return record;
  }

  /**
   * Resolves once every user line appended to the session so far is on disk
   * (rejects if its fdatasync failed). A turn awaits it before it starts.
   */
  whenDurable(sessionId: string): Promise<void> {
    return this.syncing.get(sessionId) ?? Promise.resolve();
  }

  /** Closes the transcripts this store keeps open (once their fdatasyncs are done). */
  close(): void {
    this.files.closeAll();
  }

  appendAssistantTurn(sessionId: string, turn: { obligationId: string; text: string; replyTo?: string; notice?: boolean }): AssistantTurn {
    const record: AssistantTurn = {
      type: 'assistant',
      at: this.clock.now(),
      obligationId: turn.obligationId,
      ...(turn.replyTo !== undefined ? { replyTo: turn.replyTo } : {}),
      ...(turn.notice ? { notice: true } : {}),
      text: turn.text,
    };
    this.append(sessionId, record);
    return record;
  }

  /**
   * Appends a summary of older turns (see SummaryTurn). Written without an
   * fsync: a summary lost to a crash is made again by the next turn that needs it.
   */
  appendSummary(sessionId: string, summary: NewSummary): SummaryTurn {
    const { path, header } = this.openForAppend(sessionId);
    const record: SummaryTurn = {
      type: 'summary',
      at: this.clock.now(),
      ...(summary.keepFrom !== undefined ? { keepFrom: summary.keepFrom } : {}),
      covers: summary.covers,
      ...(summary.carried ? { carried: summary.carried } : {}),
      ...(summary.cut ? { cut: summary.cut } : {}),
      ...(summary.trimmed ? { trimmed: true } : {}),
      text: summary.text,
    };
    const lines: TranscriptRecord[] = header ? [header, record] : [record];
    try {
      void this.files.append(path, lines.map(formatRecord).join(''), false).catch(() => {});
    } catch (error) {
      this.checked.delete(sessionId);
      throw error;
    }
    this.announce(sessionId, 'message', record.at);
    return record;
  }

  /** What the agent may be shown: the turns since the latest summary (and those it kept), and the summary. */
  loadAgentContext(sessionId: string, maxTurns: number): AgentContext {
    return readAgentContext(this.checkedPath(sessionId), maxTurns);
  }

  /** The last turns for the agent, read from the end of the transcript (a torn tail is repaired first). */
  loadContext(sessionId: string, limits?: ContextLimits): LoadedContext {
    return readContext(this.checkedPath(sessionId), limits);
  }

  /**
   * The conversations that may hold a message waiting for its reply, for
   * recovery after a crash: those the index counts as waiting (exact after the
   * process was killed: every count is committed before its line is written).
   * After a possible power cut (`powerLoss`) the newest commits may be gone, so
   * instead every current session whose transcript changed since `since`.
   */
  waitingSince(since: number, options: { readonly powerLoss: boolean }): SessionSummary[] {
    if (!options.powerLoss) return this.index.waitingSince(since);
    return this.index.currentSessions().filter((session) => {
      try {
        return statSync(this.transcriptPath(session.sessionId)).mtimeMs >= since;
      } catch {
        return false; // no transcript: nothing was said
      }
    });
  }

  /** Recovery read the session's transcript: this many messages wait for a reply. */
  noteUnanswered(sessionId: string, count: number): void {
    this.index.setUnanswered(sessionId, count);
    if (count > 0) this.waiting.set(sessionId, { open: count, markedAt: this.clock.now() });
    else this.waiting.delete(sessionId);
  }

  /** How long after a message its interrupted turn is still answered again (seconds). */
  get freshnessWindowSeconds(): number {
    return this.policy.freshnessWindowSeconds;
  }

  /**
   * User messages at the end of the transcript that got no reply: the turn
   * was interrupted (crash, kill, power loss). Whether one also has a delivery
   * obligation is the ledger's to say; the pipeline decides what to do.
   */
  findInterruptedTurn(sessionId: string): InterruptedTurn | undefined {
    const turns = readUnansweredTail(this.checkedPath(sessionId));
    const last = turns.at(-1);
    if (!last) return undefined;
    const now = this.clock.now();
    return {
      sessionId,
      turns,
      ageMs: now - last.at,
      decision: decideInterrupted(last.at, now, this.policy.freshnessWindowSeconds),
    };
  }

  /** Whether the reply carried by `obligationId` is already in the transcript (recovery after a crash). */
  findAssistantTurn(sessionId: string, obligationId: string): AssistantTurn | undefined {
    return findAssistantTurn(this.checkedPath(sessionId), obligationId);
  }

  /** The raw ids to reply to; for the delivery layer only, never for display. */
  deliveryAddress(sessionId: string): DeliveryAddress | undefined {
    return this.index.address(sessionId);
  }

  private begin(
    source: SessionSource,
    sessionKey: string,
    now: number,
    previous: { sessionId: string; reason: ResetReason } | undefined,
  ): ResolvedSession {
    const sessionId = this.newSessionId();
    this.index.start(
      {
        sessionId,
        sessionKey,
        platform: source.platform,
        chatType: source.chatType,
        chat: this.pseudonyms.chat(source.platform, source.chatId),
        address: addressOf(source),
        title: titleOf(source),
        createdAt: now,
      },
      previous,
    );
    this.logger.info('session started', {
      sessionId,
      chat: this.pseudonyms.chat(source.platform, source.chatId),
      ...(previous ? { previousSessionId: previous.sessionId, reason: previous.reason } : {}),
    });
    if (previous) this.announce(previous.sessionId, 'ended', now);
    this.announce(sessionId, 'created', now);
    return previous
      ? { sessionKey, sessionId, status: 'reset', resetReason: previous.reason, previousSessionId: previous.sessionId }
      : { sessionKey, sessionId, status: 'new' };
  }

  private append(sessionId: string, turn: UserTurn | AssistantTurn): void {
    const { path, header } = this.openForAppend(sessionId);
    const lines: TranscriptRecord[] = header ? [header, turn] : [turn];
    const user = turn.type === 'user';
    // Before the line: recovery finds waiting messages by this count (see the class comment).
    if (user) this.markWaiting(sessionId, turn.at);
    let durable: Promise<void>;
    try {
      durable = this.files.append(path, lines.map(formatRecord).join(''), user);
    } catch (error) {
      // A failed write (disk full) may have left part of a line: check again next time.
      this.checked.delete(sessionId);
      throw error;
    }
    if (user) this.trackSync(sessionId, durable);
    const answers = turn.type === 'assistant' && turn.replyTo !== undefined;
    const mark = answers ? this.waiting.get(sessionId) : undefined;
    if (mark) mark.open -= 1;
    const preview = toDisplayLine(turn.text, MAX_PREVIEW);
    const count = () => {
      this.index.recordMessage(sessionId, turn.type, turn.at, preview, answers ? this.answerEffect(sessionId, mark) : 'keep');
      this.announce(sessionId, 'message', turn.at);
    };
    if (this.group) this.group.later(count, (error) => this.logger.warn('a session counter could not be written', { sessionId, error }));
    else count();
  }

  /** Makes sure the committed count says a message waits before a user line is written. */
  private markWaiting(sessionId: string, at: number): void {
    const now = this.clock.now();
    const mark = this.waiting.get(sessionId);
    if (mark && now >= mark.markedAt && now - mark.markedAt < REMARK_MS) {
      mark.open += 1;
      return;
    }
    this.index.markUnanswered(sessionId, at);
    if (mark) {
      mark.open += 1;
      mark.markedAt = now;
    } else this.waiting.set(sessionId, { open: 1, markedAt: now });
  }

  /**
   * What an answer does to the committed count, decided when its commit is
   * written (everything queued before it is in the same transaction): a session
   * this process keeps marked keeps its count until its last known message is
   * answered, then it is cleared; one it does not know of counts down.
   */
  private answerEffect(sessionId: string, mark: WaitingMark | undefined): WaitingChange {
    const now = this.waiting.get(sessionId);
    if (mark === undefined) return now === undefined ? 'answer' : 'keep'; // marked since: that message waits
    if (now !== mark || mark.open > 0) return 'keep';
    this.waiting.delete(sessionId);
    return 'clear';
  }

  private trackSync(sessionId: string, durable: Promise<void>): void {
    const previous = this.syncing.get(sessionId);
    const all = previous ? Promise.all([previous, durable]).then(() => undefined) : durable;
    this.syncing.set(sessionId, all);
    // Forgotten once on disk; a failure is the caller's to hear (whenDurable), not an unhandled rejection.
    all.then(
      () => {
        if (this.syncing.get(sessionId) === all) this.syncing.delete(sessionId);
      },
      () => {
        if (this.syncing.get(sessionId) === all) this.syncing.delete(sessionId);
      },
    );
  }

  /**
   * The transcript to append to, and the header it starts with when it is still
   * empty; throws SessionNotFoundError for a session the index does not have. A
   * session is never deleted: once its row was read it exists, and the row is
   * read again only for a new transcript's header (two reads fewer per turn).
   */
  private openForAppend(sessionId: string): { readonly path: string; readonly header: TranscriptRecord | undefined } {
    let session: SessionSummary | undefined;
    if (!this.known.has(sessionId)) {
      session = this.get(sessionId);
      if (!session) throw new SessionNotFoundError(`no session ${JSON.stringify(sessionId.slice(0, 80))}`);
      this.known.add(sessionId);
    }
    const path = this.checkedPath(sessionId);
    if (!this.files.isEmpty(path)) return { path, header: undefined };
    session ??= this.get(sessionId);
    return { path, header: session && headerOf(session) };
  }

  /** The transcript's path, its torn tail (from a killed earlier run) cut off once per process. */
  private checkedPath(sessionId: string): string {
    const path = this.transcriptPath(sessionId);
    if (!this.checked.has(sessionId)) {
      const dropped = repairTornTail(path);
      if (dropped > 0) this.logger.warn('repaired a torn transcript line', { sessionId, bytes: dropped });
      this.checked.add(sessionId);
    }
    return path;
  }

  private announce(sessionId: string, change: SessionChange, at: number): void {
    if (!this.onEvent) return;
    const session = this.index.get(sessionId);
    if (session) this.onEvent({ type: 'session.updated', session, change, at });
  }
}

/** How many of a kept-marked session's messages wait, as far as this process knows, and when its mark was last committed. */
interface WaitingMark {
  open: number;
  markedAt: number;
}

/**
 * How long a session's mark carries further messages without a commit of its
 * own; far inside recovery's look-back (a day), which reads `updated_at`.
 */
export const REMARK_MS = 10 * 60_000;

function addressOf(source: SessionSource): DeliveryAddress {
  return {
    platform: source.platform,
    chatId: source.chatId,
    chatType: source.chatType,
    ...(source.threadId !== undefined ? { threadId: source.threadId } : {}),
  };
}

function titleOf(source: SessionSource): string | null {
  const name = source.chatType === 'direct' ? (source.senderName ?? source.chatName) : source.chatName;
  return sanitizeDisplayName(name) ?? null;
}

function headerOf(session: SessionSummary): TranscriptRecord {
  return {
    type: 'session',
    v: TRANSCRIPT_VERSION,
    sessionId: session.sessionId,
    sessionKey: session.sessionKey,
    createdAt: session.createdAt,
    platform: session.platform,
    chatType: session.chatType,
    chat: session.chat,
  };
}
