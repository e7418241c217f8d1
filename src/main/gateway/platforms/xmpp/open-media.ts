import { isIP } from 'node:net';
import { downloadErrorWords, httpMediaBody, MediaFetchError, theMedia, type MediaBody, type MediaOffer } from '../../media/media';
import { MAX_OOB_URL } from './oob';

/**
 * Downloads a file an XMPP message offered (oob.ts): an HTTP GET of that URL
 * and nothing else — no credentials, no cookies, the account's password never.
 * HTTPS to another machine; plain HTTP, or a link to this machine itself (a
 * loopback name or address), only where the settings allow it
 * (`allowHttpFiles`): a file in plain HTTP can be read and changed on the way,
 * and a link to this machine would let whoever may write to the bot make
 * Homing read a local service and hand its answer to the agent. A redirect is followed (at most MAX_REDIRECTS), each
 * target checked by the same rules. The size is unknown until the response
 * says it (XEP-0363 uploads are served with a Content-Length).
 */

const MAX_REDIRECTS = 3;

export interface XmppMediaOptions {
  /** Plain http:// URLs, and links to this machine (settings `allowHttpFiles`). */
  readonly allowHttp: boolean;
  readonly fetch?: typeof fetch;
}

export async function openXmppMedia(
  offer: Pick<MediaOffer, 'kind' | 'source'>,
  options: { readonly signal: AbortSignal; readonly maxBytes: number },
  settings: XmppMediaOptions,
): Promise<MediaBody> {
  const what = theMedia(offer.kind);
  let url = checked(offer.source, settings, what);
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await (settings.fetch ?? fetch)(url, { signal: options.signal, redirect: 'manual', credentials: 'omit' });
    } catch (error) {
      throw new MediaFetchError(`${what} could not be downloaded from ${hostOf(url)}: ${options.signal.aborted ? 'stopped' : downloadErrorWords(error)}`, false);
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      void response.body?.cancel().catch(() => undefined);
      if (hop >= MAX_REDIRECTS) throw new MediaFetchError(`${what} could not be downloaded: ${hostOf(url)} redirects too often`, true);
      url = checked(resolve(location, url), settings, what);
      continue;
    }
    return httpMediaBody(response, options.maxBytes, what);
  }
}

/** The URL to fetch, or a permanent refusal in words. */
function checked(source: string, settings: XmppMediaOptions, what: string): string {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw new MediaFetchError(`${what} has no link Homing can use`, true);
  }
  if (source.length > MAX_OOB_URL || url.username !== '' || url.password !== '') throw new MediaFetchError(`${what} has no link Homing can use`, true);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new MediaFetchError(`${what} has no link Homing can use (${url.protocol.replace(/:$/, '').slice(0, 20)} links are not fetched)`, true);
  }
  if (settings.allowHttp) return url.href;
  if (isLoopback(url.hostname)) throw new MediaFetchError(`${what} links to this machine itself (${url.hostname}); Homing does not fetch such links unless "allowHttpFiles" is on in the XMPP settings`, true);
  if (url.protocol === 'https:') return url.href;
  throw new MediaFetchError(`${what} is offered over plain http from ${url.hostname}; Homing fetches files over http only where "allowHttpFiles" is on in the XMPP settings`, true);
}

function resolve(location: string, base: string): string {
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
}

/** 127.0.0.0/8, ::1 and `localhost` (which the system resolves to them). */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./.test(host) || /^::ffff:7f[0-9a-f]{2}:/.test(host);
  return false;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the server';
  }
}
