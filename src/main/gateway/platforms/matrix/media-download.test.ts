import { describe, expect, it } from 'vitest';
import { MediaFetchError } from '../../media/media';
import { downloadMxc } from './media-download';

const TOKEN = 'syt_aG9taW5n_SECRETSECRETSECRET';
const MXC = 'mxc://example.org:8448/AbC123_-x';
const options = () => ({ signal: new AbortController().signal, maxBytes: 1_000_000 });

/** A homeserver stub: `answer(path)` per request; records what was asked and with which Authorization. */
function homeserver(answer: (path: string) => Response | Error) {
  const seen: { path: string; auth: string | null; redirect: RequestRedirect | undefined }[] = [];
  const fetchStub: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    seen.push({ path: url.pathname + url.search, auth: new Headers(init?.headers).get('authorization'), redirect: init?.redirect });
    const result = answer(url.pathname);
    if (result instanceof Error) throw result;
    return result;
  };
  return { seen, download: { homeserver: 'https://matrix.example.org', token: TOKEN, fetch: fetchStub } };
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const bytes = (text: string) => new Response(text, { status: 200, headers: { 'content-type': 'image/png', 'content-length': String(Buffer.byteLength(text)) } });

async function read(stream: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

async function failure(promise: Promise<unknown>): Promise<MediaFetchError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MediaFetchError);
  expect((error as Error).message).not.toContain(TOKEN);
  return error as MediaFetchError;
}

describe('downloading a Matrix file (authenticated media, spec v1.11)', () => {
  it('asks the authenticated endpoint with the token in the Authorization header only, following no redirect', async () => {
    const { seen, download } = homeserver(() => bytes('PNG bytes'));
    const body = await downloadMxc(MXC, 'image', options(), download);
    expect(body).toMatchObject({ size: 9, mime: 'image/png' });
    expect(await read(body.stream)).toBe('PNG bytes');
    expect(seen).toEqual([{ path: '/_matrix/client/v1/media/download/example.org%3A8448/AbC123_-x', auth: `Bearer ${TOKEN}`, redirect: 'error' }]);
  });

  it('falls back to the old endpoint when the server does not know the new one (404 M_UNRECOGNIZED, 405, 400)', async () => {
    for (const refusal of [json(404, { errcode: 'M_UNRECOGNIZED', error: 'Unrecognized request' }), new Response('Method Not Allowed', { status: 405 }), new Response('<html>bad</html>', { status: 400 })]) {
      const { seen, download } = homeserver((path) => (path.startsWith('/_matrix/client/v1/') ? refusal.clone() : bytes('old')));
      expect(await read((await downloadMxc(MXC, 'image', options(), download)).stream)).toBe('old');
      expect(seen.map((request) => request.path)).toEqual(['/_matrix/client/v1/media/download/example.org%3A8448/AbC123_-x', '/_matrix/media/v3/download/example.org%3A8448/AbC123_-x']);
    }
  });

  it('takes a missing file (404 M_NOT_FOUND) as gone for good, without asking the old endpoint', async () => {
    const { seen, download } = homeserver(() => json(404, { errcode: 'M_NOT_FOUND', error: 'Not found' }));
    const error = await failure(downloadMxc(MXC, 'voice', options(), download));
    expect(error).toMatchObject({ permanent: true, message: 'the voice message is no longer on the homeserver (404 M_NOT_FOUND: Not found)' });
    expect(seen).toHaveLength(1);
    expect(await failure(downloadMxc(MXC, 'image', options(), homeserver(() => json(403, { errcode: 'M_FORBIDDEN' })).download))).toMatchObject({ permanent: true });
  });

  it('tries again later after a rate limit, a server error, a refused token or a network failure', async () => {
    for (const answer of [json(429, { errcode: 'M_LIMIT_EXCEEDED', retry_after_ms: 2000 }), new Response('<html>502</html>', { status: 502 }), json(504, { errcode: 'M_NOT_YET_UPLOADED' }), json(401, { errcode: 'M_UNKNOWN_TOKEN' })]) {
      const error = await failure(downloadMxc(MXC, 'image', options(), homeserver(() => answer).download));
      expect(error.permanent, error.message).toBe(false);
    }
    const network = Object.assign(new TypeError(`fetch failed for https://matrix.example.org/?${TOKEN}`), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(await failure(downloadMxc(MXC, 'image', options(), homeserver(() => network).download))).toMatchObject({ permanent: false, message: expect.stringContaining('ECONNREFUSED') });
  });

  it('refuses an unusable URI and a body declared over the limit without reading it', async () => {
    const { seen, download } = homeserver(() => bytes('x'.repeat(100)));
    expect(await failure(downloadMxc('mxc://example.org/../../etc', 'image', options(), download))).toMatchObject({ permanent: true });
    expect(seen).toEqual([]);
    expect(await failure(downloadMxc(MXC, 'image', { ...options(), maxBytes: 10 }, download))).toMatchObject({ permanent: true, message: expect.stringMatching(/^too large/) });
  });

  it('keeps a hostile error text bounded and free of control characters', async () => {
    const error = await failure(downloadMxc(MXC, 'image', options(), homeserver(() => json(418, { errcode: 'M_X\u0000', error: `a\nb${'x'.repeat(10_000)}` })).download));
    expect(error.message).not.toMatch(/\p{Cc}/u);
    expect(error.message.length).toBeLessThan(400);
  });
});
