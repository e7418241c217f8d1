import { afterEach, describe, expect, it } from 'vitest';
import { FakeSpeech, parseMultipart } from './fake-speech';

/**
 * The fake transcription server checked on the raw wire before any test trusts
 * it: bodies built by hand (as curl -F sends them) and by undici's FormData
 * (as Homing sends them), answers in OpenAI's shapes.
 */

const BOUNDARY = '----curl-boundary-7d4a1b';

/** A multipart body as `curl -F file=@name -F model=… -F …` builds it. */
function curlBody(fields: Record<string, string>, file?: { name: string; type: string; bytes: Buffer }): Buffer {
  const pieces: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`));
    pieces.push(file.bytes, Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(pieces);
}

function post(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body: new Uint8Array(body), headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers } });
}

/** Bytes that contain CRLFs and a boundary-like line, so a naive split would cut them. */
const TRICKY = Buffer.concat([Buffer.from('RIFF\r\n--not-the-boundary\r\n'), Buffer.from([0, 1, 2, 255, 13, 10])]);

describe('the fake speech server', () => {
  let fake: FakeSpeech;
  afterEach(() => fake.close());

  it('answers a transcription as {"text"} and records model, language, file name, type and bytes', async () => {
    fake = await FakeSpeech.start({ defaultTranscript: 'good morning' });
    const response = await post(fake.url, curlBody({ model: 'whisper-1', language: 'en', response_format: 'json' }, { name: 'note.ogg', type: 'audio/ogg', bytes: TRICKY }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ text: 'good morning' });
    expect(fake.requests).toEqual([
      { model: 'whisper-1', language: 'en', responseFormat: 'json', filename: 'note.ogg', contentType: 'audio/ogg', bytes: TRICKY, authorization: undefined },
    ]);
  });

  it('parses the body undici’s FormData builds (what Homing sends)', async () => {
    fake = await FakeSpeech.start();
    const form = new FormData();
    form.append('file', new Blob([TRICKY], { type: 'audio/mpeg' }), 'a b "c".mp3');
    form.append('model', 'small');
    await fetch(fake.url, { method: 'POST', body: form });
    expect(fake.requests[0]).toMatchObject({ model: 'small', contentType: 'audio/mpeg', bytes: TRICKY });
    // undici percent-encodes the quote in a file name (the WHATWG form-data encoding).
    expect(fake.requests[0]!.filename).toBe('a b %22c%22.mp3');
  });

  it('picks the transcript by the audio’s bytes or by a predicate, the latest rule first', async () => {
    fake = await FakeSpeech.start({ defaultTranscript: 'default' });
    fake.transcriptFor(Buffer.from('one'), 'first');
    fake.transcriptFor((request) => request.language === 'de', 'zweite');
    const send = async (bytes: string, language: string): Promise<unknown> =>
      (await post(fake.url, curlBody({ model: 'm', language }, { name: 'a.wav', type: 'audio/wav', bytes: Buffer.from(bytes) }))).json();
    expect(await send('one', 'en')).toEqual({ text: 'first' });
    expect(await send('one', 'de')).toEqual({ text: 'zweite' });
    expect(await send('two', 'en')).toEqual({ text: 'default' });
  });

  it('answers response_format text as plain text and verbose_json with segments', async () => {
    fake = await FakeSpeech.start({ defaultTranscript: 'hi' });
    const audio = { name: 'a.wav', type: 'audio/wav', bytes: Buffer.from('x') };
    const text = await post(fake.url, curlBody({ model: 'm', response_format: 'text' }, audio));
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await text.text()).toBe('hi\n');
    const verbose = (await (await post(fake.url, curlBody({ model: 'm', response_format: 'verbose_json' }, audio))).json()) as Record<string, unknown>;
    expect(verbose).toMatchObject({ task: 'transcribe', text: 'hi', segments: [] });
  });

  it('refuses a request without a file, or without a model, with 400 and OpenAI’s error envelope', async () => {
    fake = await FakeSpeech.start();
    const noFile = await post(fake.url, curlBody({ model: 'whisper-1' }));
    expect(noFile.status).toBe(400);
    expect(await noFile.json()).toEqual({ error: { message: "Missing required parameter: 'file'.", type: 'invalid_request_error', param: 'file', code: null } });
    const noModel = await post(fake.url, curlBody({}, { name: 'a.wav', type: 'audio/wav', bytes: Buffer.from('x') }));
    expect(noModel.status).toBe(400);
    expect(((await noModel.json()) as { error: { param: string } }).error.param).toBe('model');
  });

  it('refuses a body that is not multipart', async () => {
    fake = await FakeSpeech.start();
    const response = await fetch(fake.url, { method: 'POST', body: '{"model":"whisper-1"}', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(parseMultipart(Buffer.from('--b\r\nno end'), 'b')).toBeUndefined();
  });

  it('wants the bearer key when it has one: 401 without it or with a wrong one', async () => {
    fake = await FakeSpeech.start({ apiKey: 'sk-test' });
    const body = curlBody({ model: 'm' }, { name: 'a.wav', type: 'audio/wav', bytes: Buffer.from('x') });
    expect((await post(fake.url, body)).status).toBe(401);
    const wrong = await post(fake.url, body, { authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    expect((await post(fake.url, body, { authorization: 'Bearer sk-test' })).status).toBe(200);
  });

  it('fails the next N requests with the status asked for, then answers again', async () => {
    fake = await FakeSpeech.start();
    fake.failNext(2, 503, 'overloaded');
    const body = curlBody({ model: 'm' }, { name: 'a.wav', type: 'audio/wav', bytes: Buffer.from('x') });
    const first = await post(fake.url, body);
    expect(first.status).toBe(503);
    expect(await first.json()).toEqual({ error: { message: 'overloaded', type: 'server_error', param: null, code: null } });
    expect((await post(fake.url, body)).status).toBe(503);
    expect((await post(fake.url, body)).status).toBe(200);
    expect(fake.requests).toHaveLength(3);
  });

  it('answers 404 off the transcription route', async () => {
    fake = await FakeSpeech.start();
    expect((await fetch(fake.url.replace('transcriptions', 'translations'), { method: 'POST', body: 'x' })).status).toBe(404);
    expect((await fetch(fake.url)).status).toBe(404);
  });

  it('in the whisper.cpp dialect, answers a request without a file with 200 and {"error": "…"}', async () => {
    fake = await FakeSpeech.start({ dialect: 'whisper.cpp' });
    const response = await post(fake.url, curlBody({ model: 'm' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ error: "no 'file' field in the request" });
  });
});
