import { describe, expect, it } from 'vitest';
import { checkLatestRelease, LATEST_RELEASE_URL, type ReleaseFetch } from './release-check';

/** GitHub's /releases/latest answer, trimmed to what matters here plus the fields it always has. */
function release(tag: unknown): string {
  return JSON.stringify({
    url: 'https://api.github.com/repos/homing-app/homing/releases/1',
    html_url: 'https://evil.example/phish',
    tag_name: tag,
    name: `Homing ${String(tag)}`,
    draft: false,
    prerelease: false,
    assets: [],
    body: 'Release notes',
  });
}

/** A fetch that answers with a real Response, recording what was asked. */
function answering(body: BodyInit | null, init: ResponseInit = { status: 200 }) {
  const asked: { url: string; headers: Record<string, string> }[] = [];
  const fetch: ReleaseFetch = async (url, request) => {
    asked.push({ url, headers: request.headers });
    return new Response(body, init);
  };
  return { fetch, asked };
}

const check = (fetch: ReleaseFetch, currentVersion = '0.2.0', extra: { maxBytes?: number; timeoutMs?: number } = {}) =>
  checkLatestRelease({ currentVersion, fetch, ...extra });

describe('the headless update check', () => {
  it('finds a newer release, with a link built from its tag (never the link in the answer)', async () => {
    const { fetch, asked } = answering(release('v0.3.0'));
    expect(await check(fetch)).toEqual({ kind: 'newer', version: '0.3.0', url: 'https://github.com/homing-app/homing/releases/tag/v0.3.0' });
    // A plain GET naming Homing and its version, and nothing else about this install.
    expect(asked).toEqual([{ url: LATEST_RELEASE_URL, headers: { 'User-Agent': 'Homing/0.2.0', Accept: 'application/vnd.github+json' } }]);
  });

  it.each([
    ['the same version', 'v0.2.0', '0.2.0'],
    ['an older one', 'v0.1.9', '0.1.9'],
    ['a pre-release of the running version', 'v0.2.0-rc.1', '0.2.0-rc.1'],
  ])('says nothing is newer for %s', async (_name, tag, latest) => {
    expect(await check(answering(release(tag)).fetch)).toEqual({ kind: 'not-newer', latest });
  });

  it('orders versions as semver does, not as text', async () => {
    expect(await check(answering(release('0.10.0')).fetch, '0.9.1')).toMatchObject({ kind: 'newer', version: '0.10.0' });
    expect(await check(answering(release('v1.0.0')).fetch, '1.0.0-beta.11')).toMatchObject({ kind: 'newer', version: '1.0.0' });
    expect(await check(answering(release('v1.0.0-beta.11')).fetch, '1.0.0-beta.2')).toMatchObject({ kind: 'newer' });
    expect(await check(answering(release('v1.0.0-beta')).fetch, '1.0.0-alpha.9')).toMatchObject({ kind: 'newer' });
    expect(await check(answering(release('v1.0.0+build.7')).fetch, '1.0.0')).toMatchObject({ kind: 'not-newer' });
  });

  it.each([
    ['no tag_name', JSON.stringify({ name: 'latest' })],
    ['a tag that is not a version', release('nightly')],
    ['a tag with a path in it', release('v9.9.9/../../evil')],
    ['a leading zero', release('v01.2.3')],
    ['a number', release(3)],
    ['JSON null', 'null'],
  ])('refuses a malformed answer: %s', async (_name, body) => {
    expect(await check(answering(body).fetch)).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/is not a version/) });
  });

  it('refuses a body that is not JSON', async () => {
    expect(await check(answering('<html>rate limited</html>').fetch)).toEqual({ kind: 'failed', reason: "the release feed's answer is not JSON" });
  });

  it('stops reading a body larger than the limit', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    const result = await check(answering(endless).fetch, '0.2.0', { maxBytes: 256 * 1024 });
    expect(result).toEqual({ kind: 'failed', reason: "the release feed's answer is larger than 262144 bytes" });
    expect(pulled).toBeLessThan(10);
  });

  it('says what an HTTP error was', async () => {
    expect(await check(answering('{"message":"Not Found"}', { status: 404 }).fetch)).toEqual({ kind: 'failed', reason: 'the release feed has no release (HTTP 404)' });
    expect(await check(answering('{}', { status: 403 }).fetch)).toEqual({ kind: 'failed', reason: 'the release feed answered HTTP 403' });
  });

  it('turns a network error into a reason, not a throw', async () => {
    const offline: ReleaseFetch = () => Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND api.github.com'), { code: 'ENOTFOUND' }) }));
    expect(await check(offline)).toEqual({ kind: 'failed', reason: 'fetch failed (ENOTFOUND)' });
  });

  it('gives up on a feed that does not answer in time', async () => {
    const silent: ReleaseFetch = (_url, init) =>
      new Promise((_resolve, reject) => init.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    expect(await check(silent, '0.2.0', { timeoutMs: 20 })).toEqual({ kind: 'failed', reason: 'the release feed did not answer within 20 ms' });
  });

  it('never compares against a running version that is not semver', async () => {
    const { fetch, asked } = answering(release('v9.0.0'));
    expect(await check(fetch, 'dev')).toMatchObject({ kind: 'failed' });
    expect(asked).toEqual([]);
  });
});
