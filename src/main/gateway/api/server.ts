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
      pending++;
      void this.dispatch(method, params).then((result) => {
        pending--;
        pipe.send({ id, ...result });
      });
    });
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

  closeAll(): void {
    for (const pipe of this.pipes) pipe.close();
    this.pipes.clear();
  }
}
