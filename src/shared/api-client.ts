import { apiParams, type ApiResult, type GatewayEvent, type HomingApi, type MethodName } from './api';
import { eventMessageSchema, failure, responseSchema, type MessagePipe } from './protocol';

interface Pending {
  resolve(result: ApiResult<unknown>): void;
  timer: ReturnType<typeof setTimeout>;
}

export interface ApiClientOptions {
  /** How long a call waits for a pipe and an answer before it fails with `timeout`. */
  readonly callTimeoutMs?: number;
}

/**
 * The client side of the protocol. Pipes come and go (the gateway process
 * restarts, a WebSocket reconnects): `attach` swaps in a new one, failing the
 * calls that were in flight on the old one and re-subscribing to events.
 */
export class ApiClient {
  readonly api: HomingApi;
  private pipe: MessagePipe | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly queued: { method: string; params: unknown; id: number }[] = [];
  private readonly listeners = new Set<(event: GatewayEvent) => void>();
  private readonly callTimeoutMs: number;
  private refusal: string | undefined;
  /** Set while a pipe that was there is gone: calls fail at once instead of waiting out their timeout. */
  private lostReason: string | undefined;

  constructor(options: ApiClientOptions = {}) {
    this.callTimeoutMs = options.callTimeoutMs ?? 15_000;
    this.api = this.buildApi();
  }

  attach(pipe: MessagePipe): void {
    this.detach('the gateway connection was replaced');
    this.lostReason = undefined;
    this.pipe = pipe;
    pipe.onMessage((message) => this.receive(message));
    pipe.onClose(() => {
      if (this.pipe === pipe) this.detach('the gateway connection closed');
    });
    if (this.listeners.size > 0) pipe.send({ id: this.allocateId(), method: 'subscribe' });
    for (const call of this.queued.splice(0)) pipe.send(call);
  }

  /**
   * No pipe will ever come (the window cannot reach the gateway at all, e.g. a
   * headless window opened without its token): every call, queued or later,
   * fails at once with this reason instead of waiting for its timeout.
   */
  refuse(reason: string): void {
    this.refusal = reason;
    for (const call of this.queued.splice(0)) this.settle(call.id, failure('disconnected', reason));
  }

  /**
   * The pipe is gone and the next one may take a while (the gateway stopped or
   * restarts): calls fail at once with this reason until `attach`, so the
   * window shows what it last knew instead of spinning for the call timeout.
   */
  lost(reason: string): void {
    this.lostReason = reason;
    for (const call of this.queued.splice(0)) this.settle(call.id, failure('disconnected', reason));
  }

  get connected(): boolean {
    return this.pipe !== undefined;
  }

  private detach(reason: string): void {
    const pipe = this.pipe;
    this.pipe = undefined;
    for (const [id, pending] of this.pending) {
      if (this.queued.some((call) => call.id === id)) continue;
      clearTimeout(pending.timer);
      pending.resolve(failure('disconnected', reason));
      this.pending.delete(id);
    }
    pipe?.close();
  }

  private allocateId(): number {
    return this.nextId++;
  }

  private call(method: MethodName, params: unknown): Promise<ApiResult<unknown>> {
    if (this.refusal !== undefined) return Promise.resolve(failure('disconnected', this.refusal));
    if (this.lostReason !== undefined && !this.pipe) return Promise.resolve(failure('disconnected', this.lostReason));
    return new Promise((resolve) => {
      const id = this.allocateId();
      const timer = setTimeout(() => {
        this.pending.delete(id);
        const index = this.queued.findIndex((call) => call.id === id);
        if (index >= 0) this.queued.splice(index, 1);
        resolve(failure('timeout', 'the gateway did not answer in time'));
      }, this.callTimeoutMs);
      this.pending.set(id, { resolve, timer });
      const message = { id, method, params };
      if (this.pipe) this.pipe.send(message);
      else this.queued.push(message);
    });
  }

  private settle(id: number, result: ApiResult<unknown>): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    pending.resolve(result);
  }

  private receive(message: unknown): void {
    const event = eventMessageSchema.safeParse(message);
    if (event.success) {
      for (const listener of this.listeners) listener(event.data.event as GatewayEvent);
      return;
    }
    const response = responseSchema.safeParse(message);
    if (!response.success || typeof response.data.id !== 'number') return;
    const data = response.data;
    this.settle(data.id as number, data.ok ? { ok: true, value: data.value } : failure(data.error.code as never, data.error.message));
  }

  private buildApi(): HomingApi {
    const subscribe = (listener: (event: GatewayEvent) => void): (() => void) => {
      this.listeners.add(listener);
      if (this.listeners.size === 1) this.pipe?.send({ id: this.allocateId(), method: 'subscribe' });
      return () => {
        this.listeners.delete(listener);
        if (this.listeners.size === 0) this.pipe?.send({ id: this.allocateId(), method: 'unsubscribe' });
      };
    };
    const api: Record<string, unknown> = { subscribe };
    for (const method of Object.keys(apiParams) as MethodName[]) {
      api[method] = (params?: unknown) => this.call(method, params);
    }
    return api as HomingApi;
  }
}
