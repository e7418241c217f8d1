import { describe, expect, it } from 'vitest';
import { bytesOf, refusal } from '../../media/fixtures/media-bodies';
import type { MediaOffer } from '../../media/media';
import { openSlackMedia } from './open-media';

/**
 * openSlackMedia with a stub HTTP client: which hosts get the bot token, how
 * redirects, Slack's sign-in page, Web API errors and statuses are taken. The
 * adapter against the fake Slack's files route is slack-adapter.media.test.ts.
 */

const TOKEN = 'xoxb-1234567890123-1234567890123-SeCrEtSeCrEtSeCrEt';
const URL_ON_SLACK = 'https://files.slack.com/files-pri/T0TEAM1234-F0PHOTO123/download/plant.jpg';
const MB = 1_000_000;
const photo = Buffer.from(Array.from({ length: 5_000 }, (_, i) => (i * 13) % 256));

interface Asked {
  readonly url: string;
  readonly authorization: string | undefined;
  readonly redirect: RequestRedirect | undefined;
}

/** A stub fetch answering each URL by `answers` (a function of the URL), recording what was asked. */
function stub(answers: (url: string) => Response | Promise<Response>) {
  const asked: Asked[] = [];
  const fetcher = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    asked.push({ url, authorization: new Headers(init?.headers).get('authorization') ?? undefined, redirect: init?.redirect });
    return answers(url);
  }) as typeof fetch;
  return { asked, fetcher };
}

const offer = (source = `sl:F0PHOTO123:${URL_ON_SLACK}`, mime = 'image/jpeg'): Pick<MediaOffer, 'kind' | 'source' | 'mime'> => ({ kind: 'image', source, mime });
const open = (fetcher: typeof fetch, what = offer(), maxBytes = MB, apiUrl = 'https://slack.com/api/') =>
  openSlackMedia(what, { signal: new AbortController().signal, maxBytes }, { botToken: TOKEN, apiUrl, fetch: fetcher });
const file = (bytes: Buffer, type = 'image/jpeg', headers: Record<string, string> = {}) => new Response(new Uint8Array(bytes), { status: 200, headers: { 'content-type': type, 'content-length': String(bytes.length), ...headers } });
const redirect = (location: string) => new Response(null, { status: 302, headers: { location } });

describe('opening a Slack file', () => {
  it('downloads the exact bytes with the bot token, redirects not followed by fetch itself', async () => {
    const { asked, fetcher } = stub(() => file(photo));
    const body = await open(fetcher);
    expect(body).toMatchObject({ size: photo.length, mime: 'image/jpeg' });
    expect((await bytesOf(body)).equals(photo)).toBe(true);
    expect(asked).toEqual([{ url: URL_ON_SLACK, authorization: `Bearer ${TOKEN}`, redirect: 'manual' }]);
  });

  it('sends the token to the configured API’s origin (a fake Slack), and refuses a link anywhere else before any request', async () => {
    const local = 'http://127.0.0.1:4000/files-pri/T1-F0PHOTO123/download/plant.jpg';
    const { asked, fetcher } = stub(() => file(photo));
    await bytesOf(await open(fetcher, offer(`sl:F0PHOTO123:${local}`), MB, 'http://127.0.0.1:4000/api/'));
    expect(asked).toEqual([{ url: local, authorization: `Bearer ${TOKEN}`, redirect: 'manual' }]);
    for (const elsewhere of [
      'https://evil.example/files-pri/T1-F1/x.jpg',
      'http://files.slack.com/files-pri/T1-F1/x.jpg',
      'https://files.slack.com:8443/files-pri/T1-F1/x.jpg',
      'https://user:pw@files.slack.com/files-pri/T1-F1/x.jpg',
      'https://files.slack.com.evil.example/x.jpg',
      'http://127.0.0.1:4001/files-pri/T1-F1/x.jpg',
    ]) {
      const error = await refusal(open(fetcher, offer(`sl:F0PHOTO123:${elsewhere}`), MB, 'http://127.0.0.1:4000/api/'));
      expect([error.permanent, error.message]).toEqual([true, 'the image has no Slack link Homing can use']);
    }
    expect(await refusal(open(fetcher, offer('dc:1:2:3:https://files.slack.com/x')))).toMatchObject({ permanent: true });
    expect(asked).toHaveLength(1);
  });

  it('follows a redirect on Slack’s file host with the token, to Slack’s CDN without it, and nowhere else', async () => {
    const cdn = 'https://files-edge.slack-edge.com/signed/plant.jpg?sig=1';
    const { asked, fetcher } = stub((url) => (url === URL_ON_SLACK ? redirect('/files-pri/T0TEAM1234-F0PHOTO123/plant.jpg') : url.includes('/files-pri/') ? redirect(cdn) : file(photo)));
    expect((await bytesOf(await open(fetcher))).equals(photo)).toBe(true);
    expect(asked.map((request) => [request.url, request.authorization])).toEqual([
      [URL_ON_SLACK, `Bearer ${TOKEN}`],
      ['https://files.slack.com/files-pri/T0TEAM1234-F0PHOTO123/plant.jpg', `Bearer ${TOKEN}`],
      [cdn, undefined],
    ]);

    const away = stub(() => redirect('https://collector.example/steal'));
    const error = await refusal(open(away.fetcher));
    expect([error.permanent, error.message]).toEqual([true, 'the image could not be downloaded: Slack redirected to collector.example, which Homing does not fetch from']);
    expect(away.asked.map((request) => request.url)).toEqual([URL_ON_SLACK]);

    const loop = stub(() => redirect(URL_ON_SLACK));
    expect(await refusal(open(loop.fetcher))).toMatchObject({ permanent: true, message: 'the image could not be downloaded: Slack redirected more than 3 times' });
    expect(loop.asked).toHaveLength(4);
  });

  it('refuses Slack’s sign-in page (HTTP 200, text/html) in words naming the scope, never as the file', async () => {
    const page = '<!DOCTYPE html><html><body>Sign in to your workspace</body></html>';
    const { fetcher } = stub(() => new Response(page, { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' } }));
    const error = await refusal(open(fetcher));
    expect(error.permanent).toBe(true);
    expect(error.message).toBe(
      'the image was not sent: Slack answered with a web page (its sign-in page) instead of the file, so the bot token was not accepted for files; the Slack app needs the files:read scope (api.slack.com/apps → your app → OAuth & Permissions → Bot Token Scopes, then reinstall the app)',
    );
    // The same page after a redirect to the workspace's sign-in (fetched without the token).
    const via = stub((url) => (url === URL_ON_SLACK ? redirect('https://homing-test.slack.com/?redir=%2Ffiles-pri%2F') : new Response(page, { headers: { 'content-type': 'text/html' } })));
    expect(await refusal(open(via.fetcher))).toMatchObject({ permanent: true, message: expect.stringContaining('files:read') });
    expect(via.asked[1]).toMatchObject({ url: 'https://homing-test.slack.com/?redir=%2Ffiles-pri%2F', authorization: undefined });
    // An HTML file someone shared is a download (url_private_download's headers): taken as the file.
    const html = stub(() => file(Buffer.from(page), 'text/html', { 'content-disposition': 'attachment; filename="page.html"' }));
    expect((await bytesOf(await open(html.fetcher, offer(undefined, 'text/html')))).toString()).toBe(page);
    // …but not when it is not a download.
    const inline = stub(() => file(Buffer.from(page), 'text/html'));
    expect(await refusal(open(inline.fetcher, offer(undefined, 'text/html')))).toMatchObject({ permanent: true });
  });

  it('refuses a 401/403 or a Web API missing_scope answer for good, naming the scope', async () => {
    for (const status of [401, 403]) {
      const { fetcher } = stub(() => new Response('Forbidden', { status }));
      const error = await refusal(open(fetcher));
      expect([error.permanent, error.message]).toEqual([
        true,
        `the image was refused by Slack (HTTP ${status}): the bot may not read it; the Slack app needs the files:read scope (api.slack.com/apps → your app → OAuth & Permissions → Bot Token Scopes, then reinstall the app)`,
      ]);
    }
    const json = (body: unknown) => stub(() => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } })).fetcher;
    expect(await refusal(open(json({ ok: false, error: 'missing_scope', needed: 'files:read', provided: 'chat:write' })))).toMatchObject({
      permanent: true,
      message: expect.stringMatching(/^the image was refused by Slack \(missing_scope\): the Slack app needs the files:read scope/),
    });
    expect(await refusal(open(json({ ok: false, error: 'invalid_auth' })))).toMatchObject({ permanent: true, message: 'the image was refused by Slack (invalid_auth): the bot token was not accepted; paste a current one in Platforms → Slack' });
    expect(await refusal(open(json({ ok: false, error: 'ratelimited' })))).toMatchObject({ permanent: false, message: 'the image could not be downloaded: Slack said ratelimited' });
    // A JSON file someone shared is the file, whole.
    const data = JSON.stringify({ ok: false, note: 'x'.repeat(100_000) });
    const big = stub(() => new Response(data, { status: 200, headers: { 'content-type': 'application/json' } }));
    expect((await bytesOf(await open(big.fetcher, offer(undefined, 'application/json')))).toString()).toBe(data);
    const undeclared = stub(() => new Response(data, { status: 200, headers: { 'content-type': 'application/json' } }));
    expect((await bytesOf(await open(undeclared.fetcher, offer(undefined, 'text/plain')))).toString()).toBe(data);
  });

  it('takes 404 and 410 as for good, 429 and 5xx and a network failure as worth trying again, never naming the token', async () => {
    const status = (code: number) => stub(() => new Response('x', { status: code })).fetcher;
    expect(await refusal(open(status(404)))).toMatchObject({ permanent: true, message: 'the image could not be downloaded (HTTP 404: deleted, expired or not allowed)' });
    expect(await refusal(open(status(410)))).toMatchObject({ permanent: true });
    expect(await refusal(open(status(429)))).toMatchObject({ permanent: false, message: 'the image could not be downloaded (HTTP 429)' });
    expect(await refusal(open(status(503)))).toMatchObject({ permanent: false, message: 'the image could not be downloaded (HTTP 503)' });
    const failing = stub(() => Promise.reject(new TypeError('fetch failed', { cause: new Error(`connect ECONNREFUSED (${TOKEN})`) })));
    const error = await refusal(open(failing.fetcher));
    expect([error.permanent, error.message]).toEqual([false, 'the image could not be downloaded from Slack: fetch failed: connect ECONNREFUSED ([token])']);
  });

  it('refuses a file declared over the limit before reading it', async () => {
    const { fetcher } = stub(() => file(Buffer.alloc(3 * MB)));
    expect(await refusal(open(fetcher, offer(), 2 * MB))).toMatchObject({ permanent: true, message: 'too large (3 MB; the limit is 2 MB)' });
    const json = stub(() => new Response(new Uint8Array(3 * MB), { headers: { 'content-type': 'application/json', 'content-length': String(3 * MB) } }));
    expect(await refusal(open(json.fetcher, offer(), 2 * MB))).toMatchObject({ permanent: true, message: 'too large (3 MB; the limit is 2 MB)' });
  });
});
