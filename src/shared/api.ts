import { z } from 'zod';
import { isCursor } from './page-cursor';
import { CONNECTION_TARGETS, SECRET_NAMES } from './platforms';

/**
 * The one API the window calls (`window.homing`). The same interface is carried
 * over a MessagePort in Electron and a WebSocket in headless mode, by the protocol
 * in `protocol.ts`. To add a method: add its params schema to `apiParams`, its
 * result type to `ApiResults`, and its handler in `src/main/gateway/api/`.
 */

export type ApiErrorCode =
  | 'bad-request'
  | 'unknown-method'
  | 'not-found'
  | 'conflict'
  | 'unavailable'
  | 'disconnected'
  | 'timeout'
  /** Too many requests waiting on this connection: retry once answers arrive. */
  | 'busy'
  | 'internal';

export interface ApiError {
  readonly code: ApiErrorCode;
  readonly message: string;
}

/** Errors are values: nothing is thrown across a process boundary. */
export type ApiResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ApiError };

export type GatewayState = 'starting' | 'running' | 'stopping' | 'stopped';
export type GatewayMode = 'app' | 'headless';

export interface GatewayStatus {
  readonly version: string;
  readonly mode: GatewayMode;
  readonly state: GatewayState;
  readonly dataDir: string;
  readonly pid: number;
  /** Wall-clock ms since the epoch. */
  readonly startedAt: number;
  readonly uptimeMs: number;
}

/**
 * A delivery obligation's life: `pending → attempting → delivered`,
 * `attempting → failed` (retried later unless permanent), `→ abandoned`
 * (attempt cap, stale cutoff, or discarded by the user).
 */
export const DELIVERY_STATES = ['pending', 'attempting', 'delivered', 'failed', 'abandoned'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** One owed (or settled) reply as the window and `homing deliveries --json` see it. */
export interface DeliveryRow {
  readonly id: string;
  readonly state: DeliveryState;
  readonly platform: string;
  readonly chatId: string;
  readonly threadId: string | null;
  readonly sessionKey: string;
  readonly attempts: number;
  readonly chunksDelivered: number;
  readonly chunksTotal: number;
  readonly lastError: string | null;
  /** Why the row was abandoned (attempt cap, stale, discarded); null otherwise. */
  readonly abandonReason: string | null;
  /** When a failed row is retried next; null when it is not retried (permanent failure). */
  readonly nextAttemptAt: number | null;
  /** Wall-clock ms since the epoch. */
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The reply's first words, one line, at most 120 characters; the whole text is `getDeliveryText`. */
  readonly preview: string;
}

/**
 * The Deliveries list's tabs: `owed` is everything not settled yet (pending,
 * attempting, failed — permanently failed too, since only the user can settle it).
 */
export const DELIVERY_FILTERS = ['owed', 'abandoned', 'delivered'] as const;
export type DeliveryFilter = (typeof DELIVERY_FILTERS)[number];

export interface DeliveryPage {
  readonly deliveries: readonly DeliveryRow[];
  /** 1-based: the page's place in the walk that reached it. */
  readonly page: number;
  readonly pageSize: number;
  readonly hasMore: boolean;
  /** Pass as `cursor` to read the next page; null on the last page. */
  readonly nextCursor: string | null;
  /** Rows matching the query in all pages (lets the window size its scroll area). */
  readonly total: number;
}

export interface SweepReport {
  /** Rows this sweep claimed for sending. */
  readonly claimed: number;
  /** Rows moved to `abandoned` by the attempt cap or the stale cutoff. */
  readonly abandoned: number;
  /** Delivered rows older than the retention period, deleted. */
  readonly pruned: number;
  /** Owed rows left for a platform that is not connected (no attempt spent). */
  readonly waitingForPlatform: number;
  /** Rows still owed after the sweep (pending, attempting, failed and retried later). */
  readonly owed: number;
}

/** Whether the ledger itself is healthy: a failing ledger never stops a reply, but it must be seen. */
export interface LedgerHealth {
  readonly ok: boolean;
  readonly failures: number;
  readonly lastError: string | null;
  readonly lastFailureAt: number | null;
}

/** A conversation as the window and `homing sessions list --json` see it. */
export interface SessionSummary {
  readonly sessionId: string;
  readonly sessionKey: string;
  readonly platform: string;
  readonly chatType: 'direct' | 'group' | 'channel' | 'thread';
  /** The chat's pseudonym (`<platform>:<12 hex>`), never its raw id. */
  readonly chat: string;
  /** The chat's or the peer's display name when known. */
  readonly title: string | null;
  /** The last message, one line, shortened. */
  readonly lastMessagePreview: string | null;
  readonly messageCount: number;
  readonly userMessageCount: number;
  readonly assistantMessageCount: number;
  /** Whether this is its key's current session (false once reset or superseded). */
  readonly current: boolean;
  /** Wall-clock ms since the epoch. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly lastMessageAt: number | null;
  readonly endedAt: number | null;
  readonly endReason: 'daily' | 'idle' | 'command' | null;
}

export interface SessionPage {
  readonly sessions: readonly SessionSummary[];
  /** 1-based: the page's place in the walk that reached it. */
  readonly page: number;
  readonly pageSize: number;
  readonly total: number;
  /** Pass as `cursor` to read the next page; null on the last page. */
  readonly nextCursor: string | null;
}

/** A photo, voice note or file a message carried, as the window shows it (never its platform locator). */
export interface TranscriptMedia {
  /** Its id in its conversation (16 hex): `getMedia` reads its file. */
  readonly id: string;
  readonly kind: 'image' | 'voice' | 'audio' | 'video' | 'document';
  readonly name: string | null;
  readonly mime: string | null;
  readonly size: number | null;
  readonly durationS: number | null;
  /** `ready`: its file is kept; `expired`: removed after `media.keepDays`; `failed`: fetching it failed (`error`); `pending`: not fetched yet. */
  readonly state: 'ready' | 'expired' | 'failed' | 'pending';
  /** A voice note's or audio file's transcript, once made. */
  readonly transcript: string | null;
  /** Why fetching it failed, in the words the agent was told, when `state` is `failed`. */
  readonly error: string | null;
}

/** A fetched file as `getMedia` hands it to the window. */
export interface MediaFile {
  /** The type its bytes show (sniffed), or `application/octet-stream`. */
  readonly mime: string;
  readonly size: number;
  readonly name: string | null;
  /** Whether the window may show it in place: images and audio whose bytes say so, never SVG or HTML. */
  readonly inline: boolean;
  readonly dataBase64: string;
}

/** One turn of a transcript; people appear as pseudonym plus display name. */
export type TranscriptMessage =
  | {
      readonly role: 'user';
      readonly at: number;
      readonly messageRef: string | null;
      readonly sender: { readonly pseudonym: string; readonly name: string | null };
      /** A schedule's prompt, not a person's message: which schedule, in words. */
      readonly scheduled?: { readonly id: number; readonly name: string; readonly when: string } | undefined;
      readonly text: string;
      /** Photos, voice notes and files it carried. */
      readonly media?: readonly TranscriptMedia[] | undefined;
    }
  | { readonly role: 'assistant'; readonly at: number; readonly obligationId: string; readonly text: string }
  /** Older messages the agent condensed when the conversation outgrew its context budget; it is shown this instead of them. */
  | {
      readonly role: 'summary';
      readonly at: number;
      /** How many messages it stands for. */
      readonly covers: number;
      /** Of those, how many the agent was shown cut (too long for the context budget). */
      readonly cut?: number | undefined;
      /** The summary itself was cut to fit. */
      readonly trimmed?: boolean | undefined;
      readonly text: string;
    };

export interface TranscriptPage {
  readonly session: SessionSummary;
  readonly messages: readonly TranscriptMessage[];
  /** 1-based, oldest messages first. */
  readonly page: number;
  readonly pageSize: number;
  readonly pageCount: number;
  readonly totalMessages: number;
}

export type SessionChange = 'created' | 'message' | 'ended';

export type PlatformState = 'connecting' | 'connected' | 'degraded' | 'disconnected' | 'auth-failed';

export interface PlatformStatus {
  readonly name: string;
  readonly state: PlatformState;
  /** The last error in plain words, when the platform is not connected. */
  readonly error: string | null;
  /** When it tries to connect again by itself (its reconnect backoff); null or absent when no try is scheduled. */
  readonly nextAttemptAt?: number | null;
  /** The rooms the platform is in, where it has rooms (Matrix), with names; absent elsewhere. */
  readonly rooms?: readonly PlatformRoom[];
  /** The last time it said messages may have been lost (an outage longer than the service keeps them), in words. */
  readonly notice?: { readonly text: string; readonly at: number };
}

/** A room a platform is in, as the window lists it. */
export interface PlatformRoom {
  readonly id: string;
  readonly name: string;
  readonly direct: boolean;
  /** End-to-end encrypted: Homing cannot read it (yet). */
  readonly encrypted: boolean;
}

/** config.json as the window edits it; secrets are never included, only whether each is set. */
export interface ConfigView {
  readonly path: string;
  /** The configuration in force (defaults filled in). */
  readonly config: unknown;
  /**
   * What the last valid config.json itself says (no defaults filled in; {} when
   * there is no file). Forms patch this, so a save writes only what the user set.
   */
  readonly written: unknown;
  /** Why the file on disk is not in force (the last good one is), or null. */
  readonly error: string | null;
  readonly secretsSet: readonly string[];
  /** At first run (no config.json yet): an agent found on this machine, e.g. a running Ollama. */
  readonly suggestion: { readonly agent: unknown; readonly reason: string } | null;
}

/** A newer release of Homing than the one running (the window shows a banner). */
export interface UpdateNotice {
  /** `0.2.0`, without the tag's `v`. */
  readonly version: string;
  /** The release's page. */
  readonly url: string;
  /** The tray app has downloaded it: it is installed when Homing restarts. Absent in headless mode, which only tells. */
  readonly ready?: boolean;
}

/** Everything the tray and the window show at a glance, in one call. */
export interface GatewayOverview {
  readonly state: GatewayState;
  readonly deliveries: {
    readonly pending: number;
    readonly attempting: number;
    /** Failed and retried later. */
    readonly failed: number;
    /** Failed for good (blocked, chat gone): not retried. */
    readonly failedPermanently: number;
    /** Given up (attempt cap, stale cutoff). */
    readonly abandoned: number;
    /** Abandoned by the user's choice. */
    readonly discarded: number;
    readonly deliveredLastDay: number;
    /** Still to be sent: pending + attempting + failed. */
    readonly owed: number;
  };
  /** Agent turns running right now. */
  readonly turnsRunning: number;
  readonly platforms: readonly PlatformStatus[];
  readonly ledger: LedgerHealth;
  readonly lastSweep: { readonly at: number; readonly report: SweepReport } | null;
  readonly configError: string | null;
  /** A newer release, once one was found (never with `autoUpdate: false`); null or absent otherwise. */
  readonly update?: UpdateNotice | null;
  /** Photos, voice notes and files kept in the data directory, and for how long (`media.keepDays`). */
  readonly media?: { readonly files: number; readonly bytes: number; readonly keepDays: number } | undefined;
}

export type TurnOutcomeKind = 'answered' | 'agent-error' | 'cancelled' | 'command';

/** Everything the gateway announces. Discriminated by `type`; later issues add members. */
export type GatewayEvent =
  | { readonly type: 'gateway.state'; readonly state: GatewayState; readonly at: number }
  | { readonly type: 'delivery.changed'; readonly delivery: DeliveryRow; readonly at: number }
  | { readonly type: 'sweep.completed'; readonly report: SweepReport; readonly at: number }
  | { readonly type: 'ledger.health'; readonly health: LedgerHealth; readonly at: number }
  | { readonly type: 'session.updated'; readonly session: SessionSummary; readonly change: SessionChange; readonly at: number }
  /** `agent`: which agent answers (`openai · llama3.2`, with the routing rule when one chose it). */
  | { readonly type: 'turn.started'; readonly sessionId: string; readonly platform: string; readonly at: number; readonly agent?: string }
  | { readonly type: 'turn.token'; readonly sessionId: string; readonly text: string }
  | {
      readonly type: 'turn.finished';
      readonly sessionId: string;
      readonly outcome: TurnOutcomeKind;
      /** The agent's error in plain words (outcome `agent-error`). */
      readonly error: string | null;
      readonly at: number;
    }
  | { readonly type: 'reply.recorded'; readonly sessionId: string; readonly obligationId: string; readonly chunks: number; readonly at: number }
  | { readonly type: 'platform.state'; readonly platform: PlatformStatus; readonly at: number }
  | { readonly type: 'config.changed'; readonly error: string | null; readonly at: number }
  | { readonly type: 'gateway.resumed'; readonly sleptMs: number; readonly at: number }
  /** A pairing request arrived, or one was approved or denied (the window refreshes its list). */
  | { readonly type: 'pairing.changed'; readonly at: number }
  /** A platform refused someone not allowed to talk to the agent (the IRC allowlist); `sender` is their name on the platform. */
  | { readonly type: 'sender.refused'; readonly platform: string; readonly sender: string; readonly at: number }
  /** A platform says messages may have been lost for good (an outage longer than the service keeps them), in words. */
  | { readonly type: 'platform.notice'; readonly platform: string; readonly text: string; readonly at: number }
  /** A schedule was made, changed, removed, or one of its runs began or ended (the window refreshes its list). */
  | { readonly type: 'schedules.changed'; readonly at: number };

/** Someone who asked to talk to the agent (pairing), as the window and the CLI show them: a name and a pseudonym, never the raw id. */
export interface PairingRequest {
  readonly platform: string;
  /** What the sender was told, and what the owner approves or denies. */
  readonly code: string;
  readonly name: string | null;
  /** `user_<12 hex>`. */
  readonly sender: string;
  readonly requestedAt: number;
  /** Whether the code went out; false while the platform's reply budget (or a lost connection) holds it back. */
  readonly told: boolean;
}

export interface PairedSender {
  readonly platform: string;
  readonly name: string | null;
  readonly sender: string;
  readonly at: number;
}

/**
 * More new senders asked on one platform in the last hour than a person
 * plausibly brings in (a crowd of throwaway nicks): the window shows these
 * counts instead of a card for each of them.
 */
export interface PairingFlood {
  readonly platform: string;
  /** New senders who asked in the last hour, kept or not. */
  readonly lastHour: number;
  /** Of them, those not kept because the platform's list was full: not listed, and not told a code. */
  readonly notKept: number;
  /** When the first of them asked. */
  readonly since: number;
}

export interface PairingOverview {
  readonly requests: readonly PairingRequest[];
  readonly approved: readonly PairedSender[];
  readonly denied: readonly PairedSender[];
  /** Platforms under a flood of requests (empty when none is). */
  readonly floods: readonly PairingFlood[];
}

const deliveryId = z.string().regex(/^[0-9a-f]{24}$/, 'a delivery id is 24 hex characters');
const platformName = z.string().min(1).max(32);
const UPLOAD_ID = /^[A-Za-z0-9_-]{8,64}$/;

/**
 * A page's `nextCursor`, passed back to read the page after it. `page` (an
 * OFFSET, slower the deeper it goes) still works for old callers, but not
 * together with a cursor.
 */
const cursor = z.string().refine(isCursor, 'not a cursor from a previous page (pass back a nextCursor unchanged)');
const pageNumber = z.number().int().min(1).max(1_000_000);
const notBoth = [(params: { page?: number; cursor?: string }) => params.page === undefined || params.cursor === undefined, 'give page or cursor, not both'] as const;

/**
 * A config object passed through as it came: the gateway validates it (shape,
 * then schema) and names every problem. z.record would copy it by assignment,
 * and a `__proto__` key would vanish in the copy instead of being refused.
 */
const configObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  { error: 'must be an object' },
);

export { CONNECTION_TARGETS, type ConnectionTarget } from './platforms';

export interface ConnectionTestResult {
  readonly ok: boolean;
  /** What happened, in plain words ("connected to irc.libera.chat as homing", "nothing answers on …"). */
  readonly message: string;
  /** The agent's answer to the test message, when the test ran a turn (`turn: true`, the setup flow). */
  readonly answer?: string;
}

/** A model server found on this machine (the setup flow's first step): where it answers and what it has. */
export interface AgentServer {
  /** Ollama, LM Studio, llama.cpp, vLLM: which server usually listens on that port. */
  readonly name: string;
  /** Its OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1. */
  readonly baseUrl: string;
  readonly models: readonly string[];
}

/** How a schedule repeats: `every` (a repeating time or a cron pattern) or `once`. */
export const SCHEDULE_REPEATS = ['every', 'once'] as const;
export type ScheduleRepeat = (typeof SCHEDULE_REPEATS)[number];
/** What a schedule does: ask the agent a `prompt` (its answer is delivered), or deliver a fixed `text`. */
export const SCHEDULE_ACTIONS = ['prompt', 'text'] as const;
export type ScheduleAction = (typeof SCHEDULE_ACTIONS)[number];

/** A schedule's run as the window shows it: when it was due, why it ran (or not) and what became of it. */
export interface ScheduleRunSummary {
  readonly dueAt: number;
  /** `due` on time, `late` missed and run within the grace window, `now` run by hand, `missed` skipped. */
  readonly reason: 'due' | 'late' | 'now' | 'missed';
  /** `running` until its turn ends; `skipped` runs said so in their conversation. */
  readonly state: 'running' | 'answered' | 'failed' | 'skipping' | 'skipped';
  /** Due times skipped together with this one (a run after a long sleep says how many it stands for). */
  readonly missed: number;
  /** The reply's delivery id, once recorded. */
  readonly obligationId: string | null;
  /** Why it failed or was skipped, in words. */
  readonly detail: string | null;
  readonly finishedAt: number | null;
}

/** A schedule, as the window, the CLI and `/schedules` show it. */
export interface ScheduleRow {
  readonly id: number;
  readonly name: string;
  readonly repeat: ScheduleRepeat;
  /** In words: "every day at 08:00", "once on 2026-12-24 at 18:00", `cron "0 8 * * 1-5"`. */
  readonly when: string;
  /** The cron pattern of a repeating schedule (null for `once`). */
  readonly cron: string | null;
  /** When a one-time schedule runs (null for `every`). */
  readonly onceAt: number | null;
  /** The IANA time zone its times are in. */
  readonly zone: string;
  readonly action: ScheduleAction;
  /** The prompt or the text. */
  readonly body: string;
  /** The conversation it writes in: its key, platform and title (null when unknown). */
  readonly where: { readonly sessionKey: string; readonly platform: string; readonly title: string | null };
  /** A run missed while asleep or closed runs late within this many minutes of its time; later, it is skipped with a line. */
  readonly graceMinutes: number;
  readonly paused: boolean;
  /** The next due time (null: paused, or a one-time schedule that ran). */
  readonly nextRunAt: number | null;
  readonly lastRun: ScheduleRunSummary | null;
  readonly createdAt: number;
  readonly createdVia: 'window' | 'cli' | 'chat';
}

/** Params of each method, validated on arrival at the gateway. */
export const apiParams = {
  getStatus: z.undefined(),
  getOverview: z.undefined(),
  listDeliveries: z
    .object({
      state: z.enum(DELIVERY_STATES).optional(),
      filter: z.enum(DELIVERY_FILTERS).optional(),
      platform: platformName.optional(),
      cursor: cursor.optional(),
      page: pageNumber.optional(),
    })
    .strict()
    .refine(...notBoth)
    .optional(),
  retryDelivery: z.object({ id: deliveryId }).strict(),
  discardDelivery: z.object({ id: deliveryId }).strict(),
  getDeliveryText: z.object({ id: deliveryId }).strict(),
  /** The rows behind a transcript's replies (their delivery ticks); unknown ids are left out. */
  getDeliveries: z.object({ ids: z.array(deliveryId).max(500) }).strict(),
  retryDeliveries: z.object({ platform: platformName }).strict(),
  sweepNow: z.undefined(),
  getLedgerHealth: z.undefined(),
  listSessions: z
    .object({ cursor: cursor.optional(), page: pageNumber.optional(), pageSize: z.number().int().min(1).max(200).optional() })
    .strict()
    .refine(...notBoth)
    .optional(),
  getTranscript: z
    .object({
      sessionId: z.string().min(1).max(128),
      page: z.number().int().min(1).max(1_000_000).optional(),
      pageSize: z.number().int().min(1).max(500).optional(),
    })
    .strict(),
  sendLocalMessage: z
    .object({
      text: z.string().max(100_000),
      /** Lets the window resend without making a second turn. */
      clientMessageId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional(),
      /** Files uploaded with `uploadLocalFile` (their `uploadId`s), sent with the text. */
      files: z.array(z.string().regex(UPLOAD_ID)).max(10).optional(),
    })
    .strict()
    .refine((message) => message.text.trim() !== '' || (message.files?.length ?? 0) > 0, { message: 'the message is empty' }),
  /**
   * A file for the window's own chat, in pieces (each at most 512 KiB, base64):
   * `offset` is where this piece goes (the bytes received so far), `done` ends it.
   * `name` and `mime` as the browser gives them.
   */
  uploadLocalFile: z
    .object({
      uploadId: z.string().regex(UPLOAD_ID),
      offset: z.number().int().min(0).max(4_000_000_000),
      dataBase64: z.string().max(700_000).regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64'),
      name: z.string().min(1).max(255),
      mime: z.string().max(255).optional(),
      done: z.boolean().optional(),
    })
    .strict(),
  /** A fetched file of a conversation, for the window to show or save. */
  getMedia: z.object({ sessionId: z.string().min(1).max(128), mediaId: z.string().regex(/^[0-9a-f]{16}$/) }).strict(),
  findSession: z.object({ keyOrId: z.string().min(1).max(1024) }).strict(),
  cancelTurn: z.object({ sessionId: z.string().min(1).max(128) }).strict(),
  listPlatforms: z.undefined(),
  reconnectPlatform: z.object({ name: platformName }).strict(),
  /** Pauses (disconnects) or resumes every chat platform; the app's own chat keeps working. */
  setPaused: z.object({ paused: z.boolean() }).strict(),
  /** `turn`: the agent only — also run one test message and return its answer (the setup flow). */
  testConnection: z.object({ target: z.enum(CONNECTION_TARGETS), config: configObject, turn: z.boolean().optional() }).strict(),
  /** The usual local model servers (Ollama, LM Studio, llama.cpp, vLLM) that answer on this machine, with their models. */
  findAgentServers: z.undefined(),
  getConfig: z.undefined(),
  /** The gateway's last log lines (the Logs panel in Status). */
  getLogTail: z.object({ lines: z.number().int().min(1).max(300).optional() }).strict().optional(),
  setConfig: z.object({ config: configObject }).strict(),
  /** Replaces a config.json that has an error, after copying it to a timestamped backup beside it. */
  replaceConfig: z.object({ config: configObject }).strict(),
  setSecret: z
    .object({ name: z.enum(SECRET_NAMES), value: z.string().max(10_000).nullable() })
    .strict(),
  listPairing: z.undefined(),
  decidePairing: z
    .object({ code: z.string().trim().min(1, 'which code?').max(32), decision: z.enum(['approve', 'deny']) })
    .strict(),
  /** Takes back an approval or a denial (the sender must ask again). */
  revokePairing: z.object({ platform: platformName, sender: z.string().regex(/^user_[0-9a-f]{12}$/) }).strict(),
  /** Forgets the requests of a platform's flood (the last hour's); a real person among them gets a new code when they write again. */
  dismissPairingFlood: z.object({ platform: platformName }).strict(),
  /** Every schedule, soonest next run first. */
  listSchedules: z.undefined(),
  /**
   * Makes a schedule. `when`: for `every`, "day at 08:00", "monday 09:30", "15 minutes" or a cron pattern;
   * for `once`, "14:30", "tomorrow at 9:00", "2026-12-24 18:00", "in 10 minutes". `sessionKey`: the
   * conversation it writes in (default: the window's own chat). `zone` default: the gateway's time zone.
   */
  addSchedule: z
    .object({
      name: z.string().trim().max(100).optional(),
      repeat: z.enum(SCHEDULE_REPEATS),
      when: z.string().trim().min(1, 'say when').max(200),
      zone: z.string().min(1).max(64).optional(),
      action: z.enum(SCHEDULE_ACTIONS),
      body: z.string().trim().min(1, 'the prompt is empty').max(10_000),
      sessionKey: z.string().min(1).max(1024).optional(),
      graceMinutes: z.number().int().min(0).max(7 * 24 * 60).optional(),
      /** Who made it, as the list says (default `window`; `homing schedules add` says `cli`). */
      via: z.enum(['window', 'cli']).optional(),
    })
    .strict(),
  /** Changes a schedule: any of addSchedule's fields (`repeat` and `when` together), or `paused`. */
  updateSchedule: z
    .object({
      id: z.number().int().min(1),
      name: z.string().trim().max(100).optional(),
      repeat: z.enum(SCHEDULE_REPEATS).optional(),
      when: z.string().trim().min(1, 'say when').max(200).optional(),
      zone: z.string().min(1).max(64).optional(),
      action: z.enum(SCHEDULE_ACTIONS).optional(),
      body: z.string().trim().min(1, 'the prompt is empty').max(10_000).optional(),
      graceMinutes: z.number().int().min(0).max(7 * 24 * 60).optional(),
      paused: z.boolean().optional(),
    })
    .strict()
    .refine((params) => (params.repeat === undefined) === (params.when === undefined), 'give repeat and when together'),
  removeSchedule: z.object({ id: z.number().int().min(1) }).strict(),
  /** Runs a schedule now, once (paused or not); its next due time stays. */
  runScheduleNow: z.object({ id: z.number().int().min(1) }).strict(),
} as const;

/** The value each method returns. */
export interface ApiResults {
  getStatus: GatewayStatus;
  getOverview: GatewayOverview;
  listDeliveries: DeliveryPage;
  retryDelivery: DeliveryRow;
  discardDelivery: DeliveryRow;
  getDeliveryText: { readonly id: string; readonly text: string };
  getDeliveries: readonly DeliveryRow[];
  /** Failed and given-up rows of the platform made pending again (rows the user discarded are left alone). */
  retryDeliveries: { readonly retried: number };
  sweepNow: SweepReport;
  getLedgerHealth: LedgerHealth;
  listSessions: SessionPage;
  getTranscript: TranscriptPage;
  /** A session id, or a session key's current session (where a delivery's conversation is). */
  findSession: SessionSummary;
  sendLocalMessage: { readonly messageRef: string };
  uploadLocalFile: { readonly received: number };
  getMedia: MediaFile;
  cancelTurn: { readonly cancelled: boolean };
  listPlatforms: readonly PlatformStatus[];
  reconnectPlatform: PlatformStatus;
  setPaused: { readonly paused: boolean };
  testConnection: ConnectionTestResult;
  findAgentServers: { readonly servers: readonly AgentServer[] };
  getConfig: ConfigView;
  getLogTail: { readonly lines: readonly string[] };
  setConfig: ConfigView;
  replaceConfig: { readonly view: ConfigView; readonly backup: string | null };
  setSecret: { readonly secretsSet: readonly string[] };
  listPairing: PairingOverview;
  decidePairing: { readonly decision: 'approve' | 'deny'; readonly platform: string; readonly name: string | null };
  revokePairing: { readonly revoked: boolean };
  dismissPairingFlood: { readonly forgotten: number };
  listSchedules: { readonly schedules: readonly ScheduleRow[]; readonly zone: string };
  addSchedule: ScheduleRow;
  updateSchedule: ScheduleRow;
  removeSchedule: { readonly removed: boolean };
  runScheduleNow: ScheduleRow;
}

export type MethodName = keyof typeof apiParams & keyof ApiResults;
export type ApiParams<M extends MethodName> = z.infer<(typeof apiParams)[M]>;

type MethodArgs<M extends MethodName> = undefined extends ApiParams<M> ? [params?: ApiParams<M>] : [params: ApiParams<M>];

export type HomingApi = {
  readonly [M in MethodName]: (...args: MethodArgs<M>) => Promise<ApiResult<ApiResults[M]>>;
} & {
  /** Receives every gateway event until the returned function is called. */
  subscribe(listener: (event: GatewayEvent) => void): () => void;
};

export function isMethodName(value: string): value is MethodName {
  return Object.prototype.hasOwnProperty.call(apiParams, value);
}
