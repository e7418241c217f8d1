import { downloadErrorWords, httpMediaBody, MediaFetchError, theMedia, type MediaBody, type MediaOffer } from '../../media/media';
import { attachmentSchema, linkExpiry, mediaUrlAllowed, parseAttachmentSource, type AttachmentSource } from './attachments';

/**
 * Downloads a file a Discord message offered (attachments.ts). The link is
 * signed and expires (~24 h; reference.mdx, Signed Attachment CDN URLs): one
 * whose `ex` has passed, or that the CDN refuses (403/404: Discord answers an
 * expired link with 404 "This content is no longer available", as observed in
 * useapi/discord-cdn-proxy's README), is renewed once by fetching its message
 * again ("when your app receives a payload with a signed URL (like when you
 * fetch a message), it will be valid", same section) and the new link is
 * tried. Nothing the message says is fetched unless mediaUrlAllowed says so,
 * and no bot token goes to the CDN (it is a plain GET without credentials).
 */

export interface DiscordMediaDeps {
  /** The configured API (its origin may serve files: the fake Discord). */
  readonly apiUrl: string;
  /**
   * The message again (Get Channel Message) as Discord answers it now; throws a
   * MediaFetchError when it cannot (the message deleted: permanent; not
   * connected or a network error: temporary).
   */
  readonly refetch: (channelId: string, messageId: string, signal: AbortSignal) => Promise<unknown>;
  /** Wall-clock ms, for a link's `ex`. */
  readonly now: () => number;
  /** The HTTP client (tests may pass their own); global fetch by default. */
  readonly fetch?: typeof fetch;
}

/** What the CDN answers for a link that expired or whose file was removed. */
const LINK_GONE = new Set([403, 404, 410]);

export async function openDiscordMedia(
  offer: Pick<MediaOffer, 'kind' | 'source'>,
  options: { readonly signal: AbortSignal; readonly maxBytes: number },
  deps: DiscordMediaDeps,
): Promise<MediaBody> {
  const what = theMedia(offer.kind);
  const source = parseAttachmentSource(offer.source);
  if (!source || !mediaUrlAllowed(source.url, deps.apiUrl)) throw new MediaFetchError(`${what} has no Discord link Homing can use`, true);
  const expiry = linkExpiry(source.url);
  if (expiry === undefined || expiry > deps.now()) {
    const response = await download(source.url, options.signal, what, deps);
    if (!LINK_GONE.has(response.status)) return httpMediaBody(response, options.maxBytes, what);
    void response.body?.cancel().catch(() => undefined);
  }
  // Expired (or refused as if it were): the message fetched again carries a fresh link.
  const fresh = await renewedLink(source, options.signal, what, deps);
  const response = await download(fresh, options.signal, what, deps);
  if (LINK_GONE.has(response.status)) {
    void response.body?.cancel().catch(() => undefined);
    throw new MediaFetchError(`${what} is no longer on Discord: the link expired and a renewed one was refused too (HTTP ${response.status})`, true);
  }
  return httpMediaBody(response, options.maxBytes, what);
}

async function download(url: string, signal: AbortSignal, what: string, deps: DiscordMediaDeps): Promise<Response> {
  try {
    // No credentials, no redirects: a redirect could lead anywhere (the CDN serves files directly).
    return await (deps.fetch ?? fetch)(url, { signal, redirect: 'error', credentials: 'omit' });
  } catch (error) {
    throw new MediaFetchError(`${what} could not be downloaded from Discord: ${signal.aborted ? 'stopped' : downloadErrorWords(error)}`, false);
  }
}

async function renewedLink(source: AttachmentSource, signal: AbortSignal, what: string, deps: DiscordMediaDeps): Promise<string> {
  const message = await deps.refetch(source.channelId, source.messageId, signal);
  const attachments = typeof message === 'object' && message !== null ? (message as { attachments?: unknown }).attachments : undefined;
  const match = (Array.isArray(attachments) ? attachments : [])
    .map((item) => attachmentSchema.safeParse(item))
    .find((parsed) => parsed.success && parsed.data.id === source.attachmentId);
  if (!match?.success) throw new MediaFetchError(`${what} is no longer on Discord: the link expired and the message no longer carries the file`, true);
  if (!mediaUrlAllowed(match.data.url, deps.apiUrl)) throw new MediaFetchError(`${what} has no Discord link Homing can use (the renewed link points elsewhere)`, true);
  return match.data.url;
}
