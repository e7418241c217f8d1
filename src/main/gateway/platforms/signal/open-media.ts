import { formatBytes, MediaFetchError, theMedia, tooLarge, type MediaBody, type MediaOffer } from '../../media/media';
import { parseAttachmentSource } from './attachments';
import { RpcAnswerTooLongError, RpcError, type RpcCallOptions } from './json-rpc-connection';

/**
 * Fetches a file a Signal message offered (attachments.ts) from the signal-cli
 * daemon, over the JSON-RPC connection Homing already has: signal-cli
 * downloaded it when the message came and keeps it in its own data directory,
 * which Homing never reads. Facts from signal-cli (AsamK/signal-cli at
 * c26e0632, 0.14.7-SNAPSHOT; the method exists since 0.11.5, CHANGELOG, and
 * works over JSON-RPC since 0.11.6, "Fixed retrieving attachments in JSON RPC
 * mode"):
 * - `src/main/java/org/asamk/signal/commands/GetAttachmentCommand.java`:
 *   `getAttachment {id}` (man signal-cli(1) also names `recipient` or
 *   `groupId`, which Homing passes; the command itself reads only `id`) reads
 *   the whole file and answers `{data: <base64>}` (JsonAttachmentData;
 *   java.util.Base64's basic encoder: `A–Z a–z 0–9 + /`, padded with `=`).
 * - Its errors: a file it does not have is UserErrorException "Could not find
 *   attachment with ID: <id>", code -1 (SignalJsonRpcCommandHandler lines
 *   39, 250–252); a missing id "Missing attachment id parameter", -1 (since
 *   0.14.2); a read error "An error occurred reading attachment: <id>",
 *   UnexpectedErrorException, -32603 (lines 267–271).
 *
 * The answer is one JSON line, so it is bounded before it is read: the file's
 * declared size is checked against the limit first (signal-cli would read and
 * encode the whole file), and the line is taken only up to the limit's base64
 * length and some slack (json-rpc-connection.ts, `maxAnswerBytes`); the decoded
 * length is checked again before a byte is decoded.
 */

/** The answer's JSON around the base64 (`{"jsonrpc":"2.0","result":{"data":"…"},"id":12}`), with room. */
const ANSWER_SLACK = 1024;
/** Base64 characters decoded at a time (a multiple of 4): the body streams in ~192 KB pieces. */
const PIECE = 256 * 1024;
/** Reading and encoding a file in signal-cli takes a moment; a hung daemon must not hold a turn for ever. */
const GET_ATTACHMENT_TIMEOUT_MS = 120_000;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The part of the connection openMedia uses (undefined while not connected). */
export interface SignalMediaConnection {
  readonly isOpen: boolean;
  call(method: string, params: Record<string, unknown>, timeoutMs: number, options: RpcCallOptions): Promise<unknown>;
}

/** The longest `getAttachment` answer line taken for a file of at most `maxBytes`. */
export function answerLimit(maxBytes: number): number {
  return Math.ceil(maxBytes / 3) * 4 + ANSWER_SLACK;
}

export async function openSignalMedia(
  offer: Pick<MediaOffer, 'kind' | 'source'>,
  options: { readonly signal: AbortSignal; readonly maxBytes: number },
  connection: SignalMediaConnection | undefined,
): Promise<MediaBody> {
  const what = theMedia(offer.kind);
  const { maxBytes, signal } = options;
  const source = parseAttachmentSource(offer.source);
  if (!source) throw new MediaFetchError(`${what} has no signal-cli attachment id Homing can use`, true);
  if (source.size !== undefined && source.size > maxBytes) throw tooLarge(source.size, maxBytes);
  if (!connection?.isOpen) throw new MediaFetchError(`${what} cannot be fetched now: Homing is not connected to the signal-cli daemon`, false);
  let answer: unknown;
  try {
    answer = await connection.call('getAttachment', { id: source.id, ...source.place }, GET_ATTACHMENT_TIMEOUT_MS, { maxAnswerBytes: answerLimit(maxBytes), signal });
  } catch (error) {
    throw refusal(error, what, maxBytes, signal);
  }
  const data = typeof answer === 'object' && answer !== null ? (answer as { data?: unknown }).data : undefined;
  if (typeof data !== 'string') throw new MediaFetchError(`signal-cli answered without the data of ${what}`, false);
  if (data.length % 4 !== 0 || !BASE64.test(data)) throw new MediaFetchError(`signal-cli answered with data of ${what} that is not base64`, false);
  const size = (data.length / 4) * 3 - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
  if (size > maxBytes) throw tooLarge(size, maxBytes);
  return { size, stream: decoded(data) };
}

/** What a failed `getAttachment` means for the fetch, in words. */
function refusal(error: unknown, what: string, maxBytes: number, signal: AbortSignal): MediaFetchError {
  if (signal.aborted) return new MediaFetchError(`${what} could not be fetched from signal-cli: stopped`, false);
  if (error instanceof RpcAnswerTooLongError) return new MediaFetchError(`too large (signal-cli's answer was longer than a file of ${formatBytes(maxBytes)}, the limit, can be)`, true);
  if (error instanceof RpcError) {
    // -1: the daemon does not have the file (it could not download it, or runs with --ignore-attachments), or refuses the id.
    if (error.code === -1) return new MediaFetchError(`${what} is not in signal-cli's store (signal-cli: ${error.message})`, true);
    if (error.code === -32601) return new MediaFetchError(`this signal-cli cannot hand over files (getAttachment came in 0.11.5)`, true);
    return new MediaFetchError(`signal-cli could not read ${what} (${error.message})`, false);
  }
  const words = error instanceof Error ? error.message : String(error);
  return new MediaFetchError(`${what} could not be fetched from signal-cli: ${words}`, false);
}

/** The bytes, decoded a piece at a time (each piece whole base64 quanta). */
async function* decoded(data: string): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < data.length; at += PIECE) yield Buffer.from(data.slice(at, at + PIECE), 'base64');
}
