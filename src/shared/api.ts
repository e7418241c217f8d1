import { z } from 'zod';

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

/** Everything the gateway announces. Discriminated by `type`; later issues add members. */
export type GatewayEvent = { readonly type: 'gateway.state'; readonly state: GatewayState; readonly at: number };

/** Params of each method, validated on arrival at the gateway. */
export const apiParams = {
  getStatus: z.undefined(),
} as const;

/** The value each method returns. */
export interface ApiResults {
  getStatus: GatewayStatus;
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
