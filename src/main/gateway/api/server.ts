import { apiParams, isMethodName, type ApiError, type ApiResults, type ApiParams, type MethodName } from '../../../shared/api';
import { failure, requestSchema, type MessagePipe } from '../../../shared/protocol';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import { MAX_MESSAGE_DEPTH, nestsDeeperThan } from './json-depth';

/**
 * Requests one connection may have waiting for an answer. A window has a
 * handful in flight; a client that floods (or never reads, see the WebSocket
 * pipe's back-pressure) gets `busy` for the rest instead of growing the queue.
 */
export const MAX_PENDING_PER_CONNECTION = 64;

/**
 * Requests whose answer can be large (a transcript page of long messages is
 * megabytes): they wait in one queue shared by every connection and run one at
 * a time, so however many connections ask, one such answer is built at a time.
 * Everything else — status, the gateway's own actions, sends — is answered at
 * once, ahead of them.
 */
export const QUEUED_METHODS: ReadonlySet<MethodName> = new Set<MethodName>([
  'getTranscript',
  'listSessions',
  'findSession',
  'listDeliveries',
  'getDeliveries',
  'getDeliveryText',
  'getLogTail',
  'getMedia',
]);

/** Queued requests across every connection; beyond it a request gets `busy`. */
export const MAX_QUEUED_TOTAL = 256;

/**
 * Answer bytes every connection together may have waiting unread before the
 * queue holds the next large answer back (until readers catch up, or their
 * connections close and their answers are dropped).
 */
export const MAX_BUFFERED_TOTAL = 64 << 20;

/** How often a queue held back by unread answers looks again. */
const BUFFERED_RECHECK_MS = 20;
/** How long unread answers may hold the queue back before the connection furthest behind is closed. */
const MAX_HELD_BACK_MS = 5_000;

/** A handler returns the value, or throws an ApiFailure for an expected error. */
export type ApiHandlers = {
  readonly [M in MethodName]: (params: ApiParams<M>) => ApiResults[M] | Promise<ApiResults[M]>;
};

export class ApiFailure extends Error {
  constructor(
    readonly code: ApiError['code'],
    message: string,
  ) {
    super(message);
  }
}

/**
 * The gateway side of the protocol: validates each request on arrival, runs its
 * handler and always answers with a value, never an exception.
 */
export class ApiServer {
  private readonly pipes = new Set<MessagePipe>();
  /** Large-answer requests waiting their turn (QUEUED_METHODS), oldest first. */
  private readonly queue: QueuedRequest[] = [];
  private running = false;

  constructor(
    private readonly handlers: ApiHandlers,
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  get connections(): number {
    return this.pipes.size;
  }

  serve(pipe: MessagePipe): void {
    this.pipes.add(pipe);
    let unsubscribe: (() => void) | undefined;
    const stopEvents = () => {
      unsubscribe?.();
      unsubscribe = undefined;
    };
    pipe.onClose(() => {
      stopEvents();
      this.pipes.delete(pipe);
      // Nobody is left to read them: its queued requests are dropped before they run.
      for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]!.pipe === pipe) this.queue.splice(i, 1);
    });
    let pending = 0;
    pipe.onMessage((message) => {
      if (nestsDeeperThan(message, MAX_MESSAGE_DEPTH)) {
        this.logger.warn('dropped an API message nested too deeply');
        this.answerMalformed(pipe, message, `the message nests deeper than ${MAX_MESSAGE_DEPTH} levels`);
        return;
      }
      const request = requestSchema.safeParse(message);
      if (!request.success) {
        this.logger.warn('dropped a malformed API message', { issue: request.error.issues[0]?.message });
        this.answerMalformed(pipe, message, 'malformed request');
        return;
      }
      const { id, method, params } = request.data;
      if (method === 'subscribe') {
        if (!unsubscribe) unsubscribe = this.bus.on((event) => pipe.send({ event }));
        pipe.send({ id, ok: true, value: null });
        return;
      }
      if (method === 'unsubscribe') {
        stopEvents();
        pipe.send({ id, ok: true, value: null });
        return;
      }
      if (pending >= MAX_PENDING_PER_CONNECTION) {
        pipe.send({
          id,
          ...failure('busy', `${method}: ${MAX_PENDING_PER_CONNECTION} requests on this connection are still waiting for an answer; wait for them`),
        });
        return;
      }
      if (isMethodName(method) && QUEUED_METHODS.has(method)) {
        if (this.queue.length >= MAX_QUEUED_TOTAL) {
          pipe.send({ id, ...failure('busy', `${method}: ${MAX_QUEUED_TOTAL} large requests of every connection are waiting; ask again shortly`) });
          return;
        }
        pending++;
        this.queue.push({
          pipe,
          method,
          params,
          answer: (result) => {
            pending--;
            pipe.send({ id, ...result });
          },
        });
        this.runQueue();
        return;
      }
      pending++;
      void this.dispatch(method, params).then((result) => {
        pending--;
        pipe.send({ id, ...result });
      });
    });
  }

  /** Large-answer requests queued now, every connection together. */
  get queued(): number {
    return this.queue.length;
  }

  /**
   * Runs the queue, one request at a time, each answered before the next
   * starts; held back while the connections' unread answers are over
   * MAX_BUFFERED_TOTAL. A turn of the event loop between two, so the direct
   * requests that arrived meanwhile go first.
   */
  private runQueue(): void {
    if (this.running) return;
    this.running = true;
    let heldSince: number | undefined;
    const next = (): void => {
      const request = this.queue.shift();
      if (!request) {
        this.running = false;
        return;
      }
      if (this.unreadBytes() > MAX_BUFFERED_TOTAL) {
        this.queue.unshift(request);
        heldSince ??= Date.now();
        // Readers that stay behind for long hold everyone's large answers back: the furthest behind is closed.
        if (Date.now() - heldSince > MAX_HELD_BACK_MS) {
          heldSince = undefined;
          this.closeFurthestBehind();
        }
        setTimeout(next, BUFFERED_RECHECK_MS).unref();
        return;
      }
      heldSince = undefined;
      void this.dispatch(request.method, request.params).then((result) => {
        if (this.pipes.has(request.pipe)) request.answer(result);
        setImmediate(next);
      });
    };
    setImmediate(next);
  }

  private closeFurthestBehind(): void {
    let furthest: MessagePipe | undefined;
    for (const pipe of this.pipes) if (!furthest || (pipe.bufferedBytes?.() ?? 0) > (furthest.bufferedBytes?.() ?? 0)) furthest = pipe;
    if (!furthest) return;
    this.logger.warn('closed the API connection furthest behind in reading its answers: it held every large answer back', { unread: furthest.bufferedBytes?.() ?? 0 });
    furthest.close();
  }

  private unreadBytes(): number {
    let total = 0;
    for (const pipe of this.pipes) total += pipe.bufferedBytes?.() ?? 0;
    return total;
  }

  /** A message that is no request still gets an answer when it names an id. */
  private answerMalformed(pipe: MessagePipe, message: unknown, why: string): void {
    const id = (message as { id?: unknown } | null)?.id;
    if ((typeof id === 'number' && Number.isInteger(id)) || (typeof id === 'string' && id.length <= 64)) {
      pipe.send({ id, ...failure('bad-request', why) });
    }
  }

  /** Runs one call; the answer is always a result value. */
  async dispatch(method: string, params: unknown): Promise<{ ok: true; value: unknown } | { ok: false; error: ApiError }> {
    if (!isMethodName(method)) return failure('unknown-method', `unknown method ${method}`);
    const parsed = apiParams[method].safeParse(params);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return failure('bad-request', `${method}: ${where}${issue?.message ?? 'invalid params'}`);
    }
    try {
      const handler = this.handlers[method] as (params: unknown) => unknown;
      return { ok: true, value: await handler(parsed.data) };
    } catch (error) {
      if (error instanceof ApiFailure) return failure(error.code, error.message);
      this.logger.error('an API handler failed', { method, error });
      return failure('internal', `${method} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Closes every connection and drops the requests still waiting; returns how many were dropped. */
  closeAll(): number {
    const dropped = this.queue.length;
    for (const pipe of this.pipes) pipe.close();
    this.pipes.clear();
    this.queue.length = 0;
    return dropped;
  }
}

interface QueuedRequest {
  readonly pipe: MessagePipe;
  readonly method: MethodName;
  readonly params: unknown;
  readonly answer: (result: { ok: true; value: unknown } | { ok: false; error: ApiError }) => void;
}
