import { downloadErrorWords, httpMediaBody, MediaFetchError, theMedia, tooLarge, type MediaBody, type MediaOffer } from '../../media/media';
import { parseFileSource, tokenUrlAllowed } from './files';

/**
 * Downloads a file a Slack message offered (files.ts): a GET of its
 * `url_private_download` (or `url_private`) with the bot token as
 * `Authorization: Bearer` (the file object's authentication section: a token
 * "bearing at least the `files:read` scope").
 *
 * The token goes only where tokenUrlAllowed says (Slack's file host, the
 * configured API's origin). Redirects are followed by hand, at most a few: to
 * an allowed host with the token, to another Slack host (a CDN) without it,
 * anywhere else not at all.
 *
 * Slack answers a file request it does not accept the token for with its
 * sign-in page, HTTP 200 `text/html` (observed: ErikKalkoken's "fetching a
 * private Slack file" gist, whose comments report the saved "image" was
 * Slack's login page): an HTML answer is refused in words, never saved as the
 * file — unless the file itself is HTML and the answer is a download
 * (`url_private_download` "includes headers to force a browser download").
 * A 401/403, or a Web API style `{"ok": false, "error": "missing_scope"}`, is
 * refused naming the scope; 404/410 for good; 429 and 5xx are tried again.
 */

export interface SlackMediaDeps {
  readonly botToken: string;
  /** The configured Web API (its origin may be given the token; the fake Slack serves files there). */
  readonly apiUrl: string;
  /** The HTTP client (tests pass their own); global fetch by default. */
  readonly fetch?: typeof fetch;
}

/** Redirects followed at most. */
const MAX_REDIRECTS = 3;
/** Of an answer declared JSON where a file was expected, the most read to see whether it is a Web API error. */
const MAX_ERROR_BYTES = 64 * 1024;
/** What the app owner does when the token cannot read files. */
const SCOPE_ADVICE = 'the Slack app needs the files:read scope (api.slack.com/apps → your app → OAuth & Permissions → Bot Token Scopes, then reinstall the app)';

export async function openSlackMedia(
  offer: Pick<MediaOffer, 'kind' | 'source' | 'mime'>,
  options: { readonly signal: AbortSignal; readonly maxBytes: number },
  deps: SlackMediaDeps,
): Promise<MediaBody> {
  const what = theMedia(offer.kind);
  const source = parseFileSource(offer.source);
  if (!source || !tokenUrlAllowed(source.url, deps.apiUrl)) throw new MediaFetchError(`${what} has no Slack link Homing can use`, true);
  let url = source.url;
  for (let redirects = 0; ; redirects++) {
    const response = await download(url, tokenUrlAllowed(url, deps.apiUrl), options.signal, what, deps);
    if (response.status < 300 || response.status >= 400) return checkedBody(response, offer, options.maxBytes, what);
    void response.body?.cancel().catch(() => undefined);
    const next = redirectTarget(url, response.headers.get('location'));
    if (next === undefined) throw new MediaFetchError(`${what} could not be downloaded: Slack answered HTTP ${response.status} without a usable redirect`, false);
    if (redirects >= MAX_REDIRECTS) throw new MediaFetchError(`${what} could not be downloaded: Slack redirected more than ${MAX_REDIRECTS} times`, true);
    if (!tokenUrlAllowed(next.href, deps.apiUrl) && !isSlackHost(next)) throw new MediaFetchError(`${what} could not be downloaded: Slack redirected to ${next.hostname.slice(0, 100)}, which Homing does not fetch from`, true);
    url = next.href;
  }
}

async function download(url: string, withToken: boolean, signal: AbortSignal, what: string, deps: SlackMediaDeps): Promise<Response> {
  try {
    return await (deps.fetch ?? fetch)(url, {
      signal,
      // Never followed by fetch itself: each hop is checked here, and the token goes to allowed hosts only.
      redirect: 'manual',
      credentials: 'omit',
      ...(withToken ? { headers: { authorization: `Bearer ${deps.botToken}` } } : {}),
    });
  } catch (error) {
    const reason = signal.aborted ? 'stopped' : downloadErrorWords(error).split(deps.botToken).join('[token]');
    throw new MediaFetchError(`${what} could not be downloaded from Slack: ${reason}`, false);
  }
}

async function checkedBody(response: Response, offer: Pick<MediaOffer, 'mime'>, maxBytes: number, what: string): Promise<MediaBody> {
  if (response.status === 401 || response.status === 403) {
    void response.body?.cancel().catch(() => undefined);
    throw new MediaFetchError(`${what} was refused by Slack (HTTP ${response.status}): the bot may not read it; ${SCOPE_ADVICE}`, true);
  }
  if (!response.ok) return httpMediaBody(response, maxBytes, what);
  const served = bareType(response.headers.get('content-type'));
  const declared = bareType(offer.mime ?? null);
  if ((served === 'text/html' || served === 'application/xhtml+xml') && !(declared === served && isDownload(response))) {
    void response.body?.cancel().catch(() => undefined);
    throw new MediaFetchError(`${what} was not sent: Slack answered with a web page (its sign-in page) instead of the file, so the bot token was not accepted for files; ${SCOPE_ADVICE}`, true);
  }
  if (served === 'application/json' && declared !== 'application/json') return jsonChecked(response, maxBytes, what);
  return httpMediaBody(response, maxBytes, what);
}

/**
 * An answer declared JSON where a file was expected: a Web API error
 * (`{"ok": false, "error": …}`) is refused in words; anything else is the
 * file after all, streamed on from what was read.
 */
async function jsonChecked(response: Response, maxBytes: number, what: string): Promise<MediaBody> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    void response.body?.cancel().catch(() => undefined);
    throw tooLarge(declared, maxBytes);
  }
  if (!response.body) throw new MediaFetchError(`${what} came with no body`, false);
  const reader = response.body.getReader();
  const head: Uint8Array[] = [];
  let read = 0;
  let done = false;
  try {
    while (read <= MAX_ERROR_BYTES) {
      const part = await reader.read();
      if (part.done) {
        done = true;
        break;
      }
      head.push(part.value);
      read += part.value.byteLength;
    }
  } catch (error) {
    void reader.cancel().catch(() => undefined);
    throw new MediaFetchError(`${what} could not be downloaded from Slack: ${downloadErrorWords(error)}`, false);
  }
  const refusal = done ? webApiError(Buffer.concat(head).toString('utf8')) : undefined;
  if (refusal !== undefined) {
    void reader.cancel().catch(() => undefined);
    throw new MediaFetchError(refusal.permanent ? `${what} was refused by Slack (${refusal.error})${refusal.advice ? `: ${refusal.advice}` : ''}` : `${what} could not be downloaded: Slack said ${refusal.error}`, refusal.permanent);
  }
  async function* rest(): AsyncGenerator<Uint8Array> {
    try {
      yield* head;
      if (done) return;
      for (;;) {
        const part = await reader.read();
        if (part.done) return;
        yield part.value;
      }
    } finally {
      void reader.cancel().catch(() => undefined);
    }
  }
  return { ...(Number.isFinite(declared) ? { size: declared } : {}), mime: 'application/json', stream: rest() };
}

/** Web API errors that mean the token cannot read the file (docs.slack.dev/apis/web-api: `not_authed`, `invalid_auth`, `missing_scope`, …). */
const SCOPE_ERRORS = new Set(['missing_scope', 'not_allowed_token_type', 'no_permission']);
const TOKEN_ERRORS = new Set(['not_authed', 'invalid_auth', 'token_revoked', 'token_expired', 'account_inactive']);
const GONE_ERRORS = new Set(['file_not_found', 'file_deleted']);
const BUSY_ERRORS = new Set(['ratelimited', 'rate_limited', 'service_unavailable', 'internal_error', 'fatal_error', 'request_timeout']);

function webApiError(text: string): { error: string; permanent: boolean; advice?: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { ok?: unknown }).ok !== false) return undefined;
  const raw = (parsed as { error?: unknown }).error;
  const error = typeof raw === 'string' && /^[a-z0-9_]{1,64}$/.test(raw) ? raw : 'an error';
  if (SCOPE_ERRORS.has(error)) return { error, permanent: true, advice: SCOPE_ADVICE };
  if (TOKEN_ERRORS.has(error)) return { error, permanent: true, advice: 'the bot token was not accepted; paste a current one in Platforms → Slack' };
  if (GONE_ERRORS.has(error)) return { error, permanent: true, advice: 'deleted' };
  if (BUSY_ERRORS.has(error)) return { error, permanent: false };
  return { error, permanent: true };
}

/** A redirect's target, resolved against the URL that answered it; undefined when there is none or it is not http(s). */
function redirectTarget(from: string, location: string | null): URL | undefined {
  if (location === null || location.length > 4096) return undefined;
  try {
    const next = new URL(location, from);
    return next.protocol === 'https:' || next.protocol === 'http:' ? next : undefined;
  } catch {
    return undefined;
  }
}

/** Slack's own hosts (its CDN among them), fetched without the token: https, no port, no credentials in the URL. */
function isSlackHost(url: URL): boolean {
  if (url.protocol !== 'https:' || url.port !== '' || url.username !== '' || url.password !== '') return false;
  return ['slack.com', 'slack-edge.com', 'slack-files.com'].some((domain) => url.hostname === domain || url.hostname.endsWith(`.${domain}`));
}

function bareType(type: string | null): string | undefined {
  const bare = type?.split(';')[0]?.trim().toLowerCase();
  return bare === '' ? undefined : bare;
}

function isDownload(response: Response): boolean {
  return /^\s*attachment\b/i.test(response.headers.get('content-disposition') ?? '');
}
