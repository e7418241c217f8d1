import { z } from 'zod';
import type { ApiError, ApiResult, GatewayEvent } from './api';

/**
 * The wire protocol between a window and the gateway, identical on both pipes:
 *   request   { id, method, params }
 *   response  { id, ok: true, value } | { id, ok: false, error: { code, message } }
 *   event     { event: { type, ... } }
 * Two protocol-level methods sit beside the API's: `subscribe` and `unsubscribe`
 * switch event delivery on and off for the pipe they arrive on.
 */

export const PROTOCOL_METHODS = ['subscribe', 'unsubscribe'] as const;

export const requestSchema = z.object({
  id: z.union([z.number().int(), z.string().max(64)]),
  method: z.string().min(1).max(64),
  params: z.unknown().optional(),
});
export type RequestMessage = z.infer<typeof requestSchema>;

const errorSchema = z.object({ code: z.string(), message: z.string() });

export const responseSchema = z.union([
  z.object({ id: z.union([z.number(), z.string()]), ok: z.literal(true), value: z.unknown() }),
  z.object({ id: z.union([z.number(), z.string()]), ok: z.literal(false), error: errorSchema }),
]);
export type ResponseMessage = { id: RequestMessage['id'] } & ApiResult<unknown>;

export const eventMessageSchema = z.object({
  event: z.looseObject({ type: z.string() }),
});
export interface EventMessage {
  readonly event: GatewayEvent;
}

/** A bidirectional channel carrying protocol messages as plain objects. */
export interface MessagePipe {
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  onClose(listener: () => void): void;
  close(): void;
  /** Bytes sent and not yet taken by the other side (a WebSocket's buffer); absent where nothing piles up. */
  bufferedBytes?(): number;
}

export function failure(code: ApiError['code'], message: string): { ok: false; error: ApiError } {
  return { ok: false, error: { code, message } };
}
