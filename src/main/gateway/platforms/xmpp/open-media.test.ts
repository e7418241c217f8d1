import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpFileServer } from '../../../../../test/support/http-file-server';
import { waitUntil } from '../../../../../test/support/wait';
import { isLoopback, openXmppMedia } from './open-media';
import { bytesOf, refusal } from '../../media/fixtures/media-bodies';

/**
 * Fetching a file an XMPP message offered (XEP-0066), against a real HTTP
 * server on loopback standing in for the upload service.
 */

const MB = 1_000_000;
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('openXmppMedia', () => {
  let files: HttpFileServer;

  beforeEach(async () => {
    files = new HttpFileServer();
    await files.start();
  });

  afterEach(() => files.stop());

  const open = (source: string, options: { maxBytes?: number; signal?: AbortSignal; allowHttp?: boolean; fetch?: typeof fetch } = {}) =>
    openXmppMedia({ kind: 'image', source }, { signal: options.signal ?? new AbortController().signal, maxBytes: options.maxBytes ?? 50 * MB }, { allowHttp: options.allowHttp ?? true, ...(options.fetch ? { fetch: options.fetch } : {}) });



  const photo = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 13) % 256));

  it('downloads the exact bytes with their declared size and type, sending no credentials', async () => {
    const url = files.put('sunset.jpg', photo, 'image/jpeg');
    const body = await open(url);
    expect([body.size, body.mime]).toEqual([photo.length, 'image/jpeg']);
    expect(sha(await bytesOf(body))).toBe(sha(photo));
    expect(files.downloads).toMatchObject([{ status: 200, credentials: false }]);
  });

  it('refuses a file declared over the limit before reading it, and a removed one for good', async () => {
    const big = files.put('big.bin', Buffer.alloc(3 * MB));
    expect(await refusal(open(big, { maxBytes: 2 * MB }))).toMatchObject({ permanent: true, message: 'too large (3 MB; the limit is 2 MB)' });
    const gone = files.put('gone.png', photo);
    files.remove(gone);
    expect(await refusal(open(gone))).toMatchObject({ permanent: true, message: 'the image could not be downloaded (HTTP 404: deleted, expired or not allowed)' });
  });

  it('takes a 5xx and a refused connection as temporary', async () => {
    const url = files.put('a.png', photo);
    files.failNext(503);
    expect(await refusal(open(url))).toMatchObject({ permanent: false, message: 'the image could not be downloaded (HTTP 503)' });
    await files.stop();
    const error = await refusal(open(url));
    expect(error.permanent).toBe(false);
    expect(error.message).toMatch(/^the image could not be downloaded from 127\.0\.0\.1:\d+: fetch failed: .*ECONNREFUSED/);
  });

  it('fetches plain http, and links to this machine, only where allowed; never another scheme', async () => {
    const remote = 'http://upload.example.org/file_share/x/a.png';
    expect(await refusal(open(remote, { allowHttp: false }))).toMatchObject({
      permanent: true,
      message: 'the image is offered over plain http from upload.example.org; Homing fetches files over http only where "allowHttpFiles" is on in the XMPP settings',
    });
    for (const local of [files.put('x.png', photo), 'https://localhost/a.png', 'https://127.0.0.1:8443/a.png', 'https://[::1]/a.png']) {
      expect((await refusal(open(local, { allowHttp: false }))).message, local).toMatch(/links to this machine itself .* unless "allowHttpFiles" is on/);
    }
    expect(files.downloads).toEqual([]);
    let asked = '';
    const stub = (async (url: string) => {
      asked = url;
      return new Response('x');
    }) as typeof fetch;
    await open(remote, { allowHttp: true, fetch: stub });
    expect(asked).toBe(remote);
    for (const bad of ['file:///etc/passwd', 'ftp://h/a', 'https://u:p@h/a', 'nonsense']) expect((await refusal(open(bad, { fetch: stub }))).permanent, bad).toBe(true);
    await open('https://upload.example.org/a.png', { allowHttp: false, fetch: stub });
    expect(asked).toBe('https://upload.example.org/a.png');
    expect(['localhost', '127.0.0.1', '127.8.9.1', '[::1]', 'a.localhost'].map(isLoopback)).toEqual([true, true, true, true, true]);
    expect(['example.org', '10.0.0.1', '[::2]', 'localhost.example.org', '128.0.0.1'].map(isLoopback)).toEqual([false, false, false, false, false]);
  });

  it('follows a redirect checked by the same rules: to this machine yes, to plain http elsewhere no, and not forever', async () => {
    const target = files.put('b.png', photo, 'image/png');
    const hop = files.put('a.png', photo);
    files.redirect(hop, target);
    expect(sha(await bytesOf(await open(hop)))).toBe(sha(photo));
    const stub = (async (url: string) => (url.startsWith('https://upload.example.org/') ? new Response(null, { status: 302, headers: { location: 'http://upload.example.org/b.png' } }) : fetch(url))) as typeof fetch;
    expect((await refusal(open('https://upload.example.org/a.png', { allowHttp: false, fetch: stub }))).message).toMatch(/offered over plain http from upload\.example\.org/);
    files.redirect(hop, hop);
    expect(await refusal(open(hop))).toMatchObject({ permanent: true, message: `the image could not be downloaded: ${new URL(hop).host} redirects too often` });
  });

  it('hangs while the server holds the download, ends when stopped, and is served once released', async () => {
    const url = files.put('a.png', photo);
    const release = files.holdDownloads();
    const stop = new AbortController();
    const held = refusal(open(url, { signal: stop.signal }));
    await waitUntil('the download held', () => files.downloads.length === 1, 5_000);
    stop.abort();
    expect(await held).toMatchObject({ permanent: false, message: `the image could not be downloaded from ${new URL(url).host}: stopped` });
    const waiting = open(url);
    await waitUntil('the second download held', () => files.downloads.length === 2, 5_000);
    release();
    expect(sha(await bytesOf(await waiting))).toBe(sha(photo));
  });
});
