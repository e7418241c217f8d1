/**
 * One look at the release feed: is there a Homing newer than the one running?
 * The headless gateway asks this (release-watch.ts); the tray app asks
 * electron-updater instead, against the same releases.
 *
 * The request is a plain GET with `User-Agent: Homing/<version>`: no token, no
 * install id, nothing about the user. Whatever comes back is untrusted: the body
 * is read up to a limit, must be JSON with a `tag_name` that parses as semver,
 * and the link the window shows is built from that tag, never taken from the
 * body, so a feed (or whoever answers in its place) cannot put a link of its
 * choosing in the window.
 */
import { compareVersions, formatVersion, parseVersion } from './semver';
import { readBodyLimited } from '../http-body';

/** Where Homing is released (electron-builder.yml's `publish` names the same repository). */
export const RELEASE_REPOSITORY = 'homing-app/homing';
export const LATEST_RELEASE_URL = `https://api.github.com/repos/${RELEASE_REPOSITORY}/releases/latest`;

/** The release's page on GitHub, for the window's link. */
export function releasePageUrl(version: string): string {
  return `https://github.com/${RELEASE_REPOSITORY}/releases/tag/v${encodeURIComponent(version)}`;
}

/** The part of `fetch` the check uses (injected in tests). */
export type ReleaseFetch = (
  url: string,
  init: { readonly headers: Record<string, string>; readonly signal: AbortSignal },
) => Promise<{ readonly ok: boolean; readonly status: number; readonly body: ReadableStream<Uint8Array> | null }>;

export type ReleaseCheck =
  | { readonly kind: 'newer'; readonly version: string; readonly url: string }
  /** The latest release is this one, or older (a downgrade is never offered). */
  | { readonly kind: 'not-newer'; readonly latest: string }
  /** Offline, no feed, a malformed answer: why, in a few words (for one log line). */
  | { readonly kind: 'failed'; readonly reason: string };

export interface ReleaseCheckOptions {
  /** The running version (version.ts). */
  readonly currentVersion: string;
  readonly fetch?: ReleaseFetch;
  readonly url?: string;
  /** The whole request, answer included. Default 10 s. */
  readonly timeoutMs?: number;
  /** A larger answer is cut off and refused. Default 1 MiB (GitHub's answer is a few KiB plus the release notes). */
  readonly maxBytes?: number;
}

export async function checkLatestRelease(options: ReleaseCheckOptions): Promise<ReleaseCheck> {
  const current = parseVersion(options.currentVersion);
  if (!current) return { kind: 'failed', reason: `the running version ${JSON.stringify(options.currentVersion)} is not semver` };
  const fetcher = options.fetch ?? (globalThis.fetch as unknown as ReleaseFetch);
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  timer.unref();
  let text: string;
  try {
    const response = await fetcher(options.url ?? LATEST_RELEASE_URL, {
      headers: { 'User-Agent': `Homing/${options.currentVersion}`, Accept: 'application/vnd.github+json' },
      signal: abort.signal,
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { kind: 'failed', reason: response.status === 404 ? 'the release feed has no release (HTTP 404)' : `the release feed answered HTTP ${response.status}` };
    }
    const body = await readBodyLimited(response, maxBytes);
    if (body === undefined) return { kind: 'failed', reason: `the release feed's answer is larger than ${maxBytes} bytes` };
    text = body;
  } catch (error) {
    return { kind: 'failed', reason: abort.signal.aborted ? `the release feed did not answer within ${timeoutMs} ms` : describeNetworkError(error) };
  } finally {
    clearTimeout(timer);
  }
  let tag: unknown;
  try {
    tag = (JSON.parse(text) as { tag_name?: unknown } | null)?.tag_name;
  } catch {
    return { kind: 'failed', reason: "the release feed's answer is not JSON" };
  }
  const latest = typeof tag === 'string' ? parseVersion(tag) : undefined;
  if (!latest) return { kind: 'failed', reason: `the latest release's tag ${JSON.stringify(typeof tag === 'string' ? tag.slice(0, 40) : tag ?? null)} is not a version` };
  const version = formatVersion(latest);
  if (compareVersions(latest, current) <= 0) return { kind: 'not-newer', latest: version };
  return { kind: 'newer', version, url: releasePageUrl(version) };
}


/** fetch says only "fetch failed"; the reason (ENOTFOUND, ECONNREFUSED…) is its cause. */
function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  return detail ? `${error.message} (${detail})` : error.message;
}
