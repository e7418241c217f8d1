import { readBodyLimited } from '../../http-body';
import { httpMediaBody, MediaFetchError, theMedia, type MediaBody, type MediaKind } from '../../media/media';
import { errorCode } from '../../network-cause';
import { parseMxc } from './media-offer';

/**
 * Downloading a file a Matrix message offered (its `mxc://` URI).
 *
 * Authenticated media first: spec v1.11 (MSC3916; changelog v1.11, "New
 * Endpoints") added `GET /_matrix/client/v1/media/download/{serverName}/{mediaId}`,
 * which takes the access token like any client call, and deprecated the
 * unauthenticated `GET /_matrix/media/v3/download/{serverName}/{mediaId}`
 * ("Content repository", "Client behaviour"). Servers "freeze" the old one
 * (spec v1.11 content repository warning: media uploaded after the freeze is
 * only served by the new endpoints), so the new one is the one that works for
 * new media; a server older than v1.11 does not know it and answers as for any
 * unknown path: `404 M_UNRECOGNIZED` (spec "Common error codes"; matrix.org's
 * "Authenticated Media for Servers" guide: on `404 M_UNRECOGNIZED` fall back
 * rather than treat the media as missing), or `405`/`400` from older servers
 * and proxies. Only then is the old endpoint asked.
 *
 * No redirect is followed (`allow_redirect` is not sent, so the server must
 * answer with the bytes itself: spec v1.11 download, `allow_redirect`), so the
 * token goes to the homeserver and nowhere else. The token is only in the
 * Authorization header, never in a URL or an error's words.
 */

/** A refusal's JSON body is small; beyond this it is not read. */
const MAX_ERROR_BODY = 64 * 1024;

export interface MediaDownload {
  readonly homeserver: string;
  readonly token: string;
  readonly fetch: typeof fetch;
}

export async function downloadMxc(
  source: string,
  kind: MediaKind,
  options: { readonly signal: AbortSignal; readonly maxBytes: number },
  download: MediaDownload,
): Promise<MediaBody> {
  const what = theMedia(kind);
  const mxc = parseMxc(source);
  if (!mxc) throw new MediaFetchError(`${what} has no Matrix content URI Homing can use`, true);
  const path = `${encodeURIComponent(mxc.serverName)}/${encodeURIComponent(mxc.mediaId)}`;
  const authenticated = await get(`${download.homeserver}/_matrix/client/v1/media/download/${path}`, what, options.signal, download);
  if (authenticated.ok) return bodyOf(authenticated, options.maxBytes, what);
  const refused = await refusal(authenticated);
  if (!unknownEndpoint(authenticated.status, refused.errcode)) throw failure(authenticated.status, refused, what);
  const legacy = await get(`${download.homeserver}/_matrix/media/v3/download/${path}`, what, options.signal, download);
  if (legacy.ok) return bodyOf(legacy, options.maxBytes, what);
  throw failure(legacy.status, await refusal(legacy), what);
}

/** The server does not have the endpoint (older than v1.11), as opposed to not having the file. */
function unknownEndpoint(status: number, errcode: string): boolean {
  return (status === 404 && errcode === 'M_UNRECOGNIZED') || status === 405 || (status === 400 && errcode === 'M_UNRECOGNIZED') || (status === 400 && errcode === '');
}

async function get(url: string, what: string, signal: AbortSignal, download: MediaDownload): Promise<Response> {
  try {
    return await download.fetch(url, { headers: { authorization: `Bearer ${download.token}` }, signal, redirect: 'error' });
  } catch (error) {
    throw new MediaFetchError(`${what} could not be downloaded from the homeserver: ${signal.aborted ? 'stopped' : networkWords(error)}`, false);
  }
}

/** What a refusal says (`errcode`, `error`), read bounded; the body is consumed. */
async function refusal(response: Response): Promise<{ errcode: string; said: string }> {
  let body: unknown;
  try {
    body = JSON.parse((await readBodyLimited(response, MAX_ERROR_BODY)) ?? '');
  } catch {
    body = undefined;
  }
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const clean = (value: unknown, max: number) => (typeof value === 'string' ? value.slice(0, max).replace(/[\p{Cc}]/gu, ' ') : '');
  return { errcode: clean(record.errcode, 64), said: clean(record.error, 200) };
}

/**
 * A refusal in words, permanent where asking again cannot help: the file is
 * gone or never was (`404 M_NOT_FOUND`, 410), not allowed (403), refused as a
 * request (other 4xx). A rate limit (429 `M_LIMIT_EXCEEDED`), a server error
 * (5xx, including `504 M_NOT_YET_UPLOADED` of an upload still under way, spec
 * v1.7 async uploads) and a refused token (401: a new one may be stored, the
 * file is not gone) are tried again.
 */
function failure(status: number, refused: { errcode: string; said: string }, what: string): MediaFetchError {
  const detail = `${status}${refused.errcode ? ` ${refused.errcode}` : ''}${refused.said ? `: ${refused.said}` : ''}`;
  if (status === 429 || status >= 500 || status === 401) return new MediaFetchError(`the homeserver could not hand over ${what} now (${detail})`, false);
  if (status === 404 || status === 410) return new MediaFetchError(`${what} is no longer on the homeserver (${detail})`, true);
  if (status === 403) return new MediaFetchError(`the homeserver does not let the bot download ${what} (${detail})`, true);
  return new MediaFetchError(`the homeserver refused to hand over ${what} (${detail})`, true);
}

/** The bytes, counted against the limit by the caller; an error while reading (a dropped connection) put in words. */
function bodyOf(response: Response, maxBytes: number, what: string): MediaBody {
  const body = httpMediaBody(response, maxBytes, what);
  // `cancel` lets the caller close a body it stops reading before the first chunk (media-store's closeStream).
  const stream = Object.assign(worded(body.stream, what), { cancel: () => response.body?.cancel() ?? Promise.resolve() });
  return { ...body, stream };
}

async function* worded(stream: AsyncIterable<Uint8Array>, what: string): AsyncIterable<Uint8Array> {
  try {
    yield* stream;
  } catch (error) {
    if (error instanceof MediaFetchError) throw error;
    throw new MediaFetchError(`the download of ${what} broke off: ${networkWords(error)}`, false);
  }
}

/** A network failure by its code only: an error's message may name the URL (never the token, which is only in a header). */
function networkWords(error: unknown): string {
  const code = errorCode(error);
  return code ? `network error: ${code}` : 'network error';
}
