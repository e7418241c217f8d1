import { describe, expect, it } from 'vitest';
import { classify, MatrixClient, MAX_RESPONSE_BYTES, retryAfter } from './client';

const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);

describe('Matrix answers in the adapter\'s terms', () => {
  it('reads a 429 from retry_after_ms, the Retry-After header (seconds or a date), the longer of both, else 5 s; at most a day', () => {
    expect(retryAfter(1500, null, NOW)).toBe(1500);
    expect(retryAfter(undefined, '3', NOW)).toBe(3000);
    expect(retryAfter(1500, '3', NOW)).toBe(3000);
    expect(retryAfter(9000, '3', NOW)).toBe(9000);
    expect(retryAfter(undefined, new Date(NOW + 7000).toUTCString(), NOW)).toBe(7000);
    expect(retryAfter(-5, 'soon', NOW)).toBe(5000);
    expect(retryAfter(1e15, null, NOW)).toBe(24 * 3600 * 1000);
    expect(classify(429, { errcode: 'M_LIMIT_EXCEEDED', error: 'Too Many Requests', retry_after_ms: 2000 }, null, NOW)).toEqual({
      kind: 'rate-limited',
      retryAfterMs: 2000,
      description: '429 M_LIMIT_EXCEEDED: Too Many Requests',
    });
  });

  it('tells the refusals apart: 401 token, 403 forbidden, 413 too large, 404, other 4xx refused, 5xx and garbage unknown', () => {
    expect(classify(401, { errcode: 'M_UNKNOWN_TOKEN', error: 'Unrecognised access token' }, null, NOW).kind).toBe('unauthorized');
    expect(classify(403, { errcode: 'M_FORBIDDEN', error: 'not in room' }, null, NOW).kind).toBe('forbidden');
    expect(classify(413, { errcode: 'M_TOO_LARGE' }, null, NOW).kind).toBe('too-large');
    expect(classify(404, { errcode: 'M_NOT_FOUND' }, null, NOW).kind).toBe('not-found');
    expect(classify(400, { errcode: 'M_BAD_JSON' }, null, NOW)).toMatchObject({ kind: 'refused', errcode: 'M_BAD_JSON' });
    expect(classify(502, undefined, null, NOW)).toEqual({ kind: 'unknown', description: '502' });
    // A hostile error text cannot smuggle control characters or unbounded length into logs and the window.
    const hostile = classify(400, { errcode: 'M_X', error: `a\u0000b\nc${'x'.repeat(5000)}` }, null, NOW);
    expect(hostile.description).not.toMatch(/\p{Cc}/u);
    expect(hostile.description.length).toBeLessThan(400);
  });

  it('sends the token only in the Authorization header, and never names it in a failure', async () => {
    const seen: { url: string; auth: string | null }[] = [];
    const fetchStub: typeof fetch = async (input, init) => {
      seen.push({ url: String(input), auth: new Headers(init?.headers).get('authorization') });
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    };
    const client = new MatrixClient('https://matrix.example.org', fetchStub);
    const result = await client.call('GET', 'v3/account/whoami', { token: 'syt_secret_token', timeoutMs: 1000 });
    expect(result).toEqual({ ok: false, failure: { kind: 'unknown', description: 'network error: ECONNREFUSED' } });
    expect(seen).toEqual([{ url: 'https://matrix.example.org/_matrix/client/v3/account/whoami', auth: 'Bearer syt_secret_token' }]);
  });

  it('refuses an answer larger than the limit and one that is not a JSON object', async () => {
    const huge: typeof fetch = async () => new Response(new ReadableStream({
      pull(controller) {
        controller.enqueue(new Uint8Array(1 << 20));
      },
    }));
    const client = new MatrixClient('https://matrix.example.org', huge);
    const tooBig = await client.call('GET', 'v3/sync', { timeoutMs: 10_000 });
    expect(tooBig).toEqual({ ok: false, failure: { kind: 'unknown', description: `the answer could not be read (larger than ${MAX_RESPONSE_BYTES} bytes)` } });
    const notObject = new MatrixClient('https://matrix.example.org', async () => new Response('[1,2]', { status: 200 }));
    expect(await notObject.call('GET', 'v3/sync', { timeoutMs: 1000 })).toMatchObject({ ok: false, failure: { kind: 'unknown' } });
    const declared = new MatrixClient('https://matrix.example.org', async () => new Response('{}', { headers: { 'content-length': String(MAX_RESPONSE_BYTES + 1) } }));
    expect(await declared.call('GET', 'v3/sync', { timeoutMs: 1000 })).toMatchObject({ ok: false, failure: { kind: 'unknown' } });
  });
});
