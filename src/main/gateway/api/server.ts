import { apiParams, isMethodName, type ApiError, type ApiResults, type ApiParams, type MethodName } from '../../../shared/api';
import { failure, requestSchema, type MessagePipe } from '../../../shared/protocol';
import type { EventBus } from '../events';
import type { Logger } from '../logger';

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
    pipe.onMessage((message) => {
      const request = requestSchema.safeParse(message);
      if (!request.success) {
        this.logger.warn('dropped a malformed API message', { issue: request.error.issues[0]?.message });
        const id = (message as { id?: unknown } | null)?.id;
        if (typeof id === 'number' || typeof id === 'string') {
          pipe.send({ id, ...failure('bad-request', 'malformed request') });
        }
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
      void this.dispatch(method, params).then((result) => pipe.send({ id, ...result }));
    });
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
