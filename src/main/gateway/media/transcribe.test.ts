import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeSpeech } from '../../../../test/support/fake-speech';
import { freePort } from '../../../../test/support/ports';
import { isAlive } from '../../../../test/support/processes';
import { probeSpeech, silentWav, speechConfigSchema, transcribe, type SpeechConfig, type SpeechResult } from './transcribe';

let dir: string;
let voice: string;
const VOICE_BYTES = Buffer.from('OggS fake voice note bytes');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'homing-transcribe-'));
  voice = join(dir, '0123456789abcdef.ogg');
  await writeFile(voice, VOICE_BYTES);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const live = (): { signal: AbortSignal } => ({ signal: new AbortController().signal });
const voiceFile = (): { path: string; mime: string } => ({ path: voice, mime: 'audio/ogg' });

function openai(url: string, extra: Partial<Extract<SpeechConfig, { type: 'openai' }>> = {}): SpeechConfig {
  return speechConfigSchema.parse({ type: 'openai', url, ...extra });
}

/** A command engine: Node running `script` with the audio file's path as its argument. */
function command(script: string, extra: Record<string, unknown> = {}): SpeechConfig {
  return speechConfigSchema.parse({ type: 'command', command: process.execPath, args: ['-e', script, '--', '{file}'], ...extra });
}

function errorOf(result: SpeechResult): string {
  if (result.ok) throw new Error(`expected a failure, got the transcript ${JSON.stringify(result.text)}`);
  return result.error;
}

async function goneSoon(pid: number, withinMs = 2_000): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < withinMs; ) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !isAlive(pid);
}

async function waitForFile(path: string, withinMs = 5_000): Promise<string> {
  for (const started = Date.now(); Date.now() - started < withinMs; ) {
    const text = await readFile(path, 'utf8').catch(() => '');
    if (text.trim()) return text;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${path} was not written`);
}

describe('the speech config', () => {
  it('accepts an OpenAI-compatible endpoint and a command with {file}', () => {
    expect(speechConfigSchema.parse({ type: 'openai', url: 'http://127.0.0.1:8080/v1/audio/transcriptions', model: 'base.en', language: 'en', apiKeyEnv: 'OPENAI_API_KEY' })).toMatchObject({ type: 'openai' });
    expect(speechConfigSchema.parse({ type: 'command', command: 'whisper-cli', args: ['-m', 'model.bin', '-f', '{file}', '-nt', '-np'] })).toMatchObject({ type: 'command' });
  });

  it.each([
    [{ type: 'openai', url: 'ftp://host/x' }, 'must be an http:// or https:// URL'],
    [{ type: 'openai', url: 'http://h/v1/audio/transcriptions', apiKeyEnv: 'HOME' }, 'must name a variable that holds an API key'],
    [{ type: 'openai', url: 'http://h/v1/audio/transcriptions', apiKey: 'sk-123' }, 'API keys do not belong in config.json'],
    [{ type: 'openai', url: 'http://h/v1/audio/transcriptions', language: 'English please' }, 'must be a language code'],
    [{ type: 'openai', url: 'http://h/v1/audio/transcriptions', modle: 'x' }, 'modle'],
    [{ type: 'command', command: 'whisper-cli', args: ['-f', 'note.wav'] }, 'one argument must contain {file}'],
    [{ type: 'command', command: '', args: ['{file}'] }, 'must name a program'],
    [{ type: 'command', command: 'x', args: ['{file}'], timeoutMs: 10 }, 'timeoutMs'],
  ])('refuses %j with a message that says why', (config, words) => {
    const result = speechConfigSchema.safeParse(config);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain(words);
  });
});

describe('transcribing over an OpenAI-compatible endpoint', () => {
  let fake: FakeSpeech;
  afterEach(() => fake.close());

  it('uploads the file as multipart with its name, type, the model and response_format json, and returns the trimmed text', async () => {
    fake = await FakeSpeech.start();
    fake.transcriptFor(VOICE_BYTES, '  Pick up milk on the way home.\n');
    const result = await transcribe({ ...voiceFile(), name: 'Voice message' }, openai(fake.url), live());
    expect(result).toEqual({ ok: true, text: 'Pick up milk on the way home.' });
    // The sender's name has no extension, so the stored file's name (which has one) is sent.
    expect(fake.requests).toEqual([
      { model: 'whisper-1', language: undefined, responseFormat: 'json', filename: '0123456789abcdef.ogg', contentType: 'audio/ogg', bytes: VOICE_BYTES, authorization: undefined },
    ]);
  });

  it('sends the configured model and language, and a sender’s file name that has an extension', async () => {
    fake = await FakeSpeech.start();
    await transcribe({ ...voiceFile(), name: 'dir/memo.opus' }, openai(fake.url, { model: 'Systran/faster-whisper-small', language: 'de' }), live());
    expect(fake.requests[0]).toMatchObject({ model: 'Systran/faster-whisper-small', language: 'de', filename: 'memo.opus' });
  });

  it('sends a bearer key only when apiKeyEnv names a variable that is set', async () => {
    fake = await FakeSpeech.start({ apiKey: 'sk-live-123' });
    const config = openai(fake.url, { apiKeyEnv: 'SPEECH_API_KEY' });
    expect(await transcribe(voiceFile(), config, { ...live(), env: { SPEECH_API_KEY: 'sk-live-123' } })).toMatchObject({ ok: true });
    const refused = errorOf(await transcribe(voiceFile(), config, { ...live(), env: {} }));
    expect(fake.requests.map((r) => r.authorization)).toEqual(['Bearer sk-live-123', undefined]);
    expect(refused).toContain('HTTP 401');
    expect(refused).toContain('API key');
    expect(refused).toContain('provide an API key');
  });

  it('never repeats the key when the server echoes it', async () => {
    fake = await FakeSpeech.start();
    fake.failNext(1, 401, 'Incorrect API key provided: sk-secret-999');
    const error = errorOf(await transcribe(voiceFile(), openai(fake.url, { apiKeyEnv: 'X_API_KEY' }), { ...live(), env: { X_API_KEY: 'sk-secret-999' } }));
    expect(error).not.toContain('sk-secret-999');
    expect(error).toContain('[redacted]');
  });

  it('says the HTTP status with the server’s own message', async () => {
    fake = await FakeSpeech.start();
    fake.failNext(1, 503, 'The model is loading, try again later');
    expect(errorOf(await transcribe(voiceFile(), openai(fake.url), live()))).toBe(
      `the speech-to-text server at ${fake.url} answered HTTP 503: The model is loading, try again later`,
    );
  });

  it('says "not found" with a hint when the URL is not the transcription route', async () => {
    fake = await FakeSpeech.start();
    const error = errorOf(await transcribe(voiceFile(), openai(fake.url.replace('/v1/audio/transcriptions', '/inference')), live()));
    expect(error).toContain('HTTP 404 (not found: check the URL');
  });

  it('treats whisper.cpp’s 200 with {"error"} as a failure', async () => {
    fake = await FakeSpeech.start({ dialect: 'whisper.cpp' });
    fake.failNext(1, 200, 'failed to read WAV file');
    expect(errorOf(await transcribe(voiceFile(), openai(fake.url), live()))).toBe(`the speech-to-text server at ${fake.url} failed: failed to read WAV file`);
  });

  it('takes an empty transcript as success with no text', async () => {
    fake = await FakeSpeech.start({ defaultTranscript: ' ' });
    expect(await transcribe(voiceFile(), openai(fake.url), live())).toEqual({ ok: true, text: '' });
  });

  it('refuses a transcript over 1 MB', async () => {
    fake = await FakeSpeech.start({ defaultTranscript: 'a'.repeat(1024 * 1024 + 1) });
    expect(errorOf(await transcribe(voiceFile(), openai(fake.url), live()))).toContain('sent more than 1 MB');
  });

  it('says when it cannot read the audio file', async () => {
    fake = await FakeSpeech.start();
    expect(errorOf(await transcribe({ path: join(dir, 'gone.ogg'), mime: 'audio/ogg' }, openai(fake.url), live()))).toContain('ENOENT');
    expect(fake.requests).toHaveLength(0);
  });

  it('gives up at the timeout and says so', async () => {
    fake = await FakeSpeech.start();
    fake.delayAnswers(10_000);
    const started = Date.now();
    expect(errorOf(await transcribe(voiceFile(), openai(fake.url, { timeoutMs: 1_000 }), live()))).toBe('the speech-to-text engine did not answer within 1 s');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops when the caller cancels', async () => {
    fake = await FakeSpeech.start();
    fake.delayAnswers(10_000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(errorOf(await transcribe(voiceFile(), openai(fake.url), { signal: controller.signal }))).toBe('the transcription was cancelled');
  });
});

describe('transcribing over HTTP, failures without the fake', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  it('says it could not reach a server that is not running', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/v1/audio/transcriptions`;
    expect(errorOf(await transcribe(voiceFile(), openai(url), live()))).toBe(
      `could not reach the speech-to-text server at ${url} (connection refused: nothing listens there (is the server running?) (ECONNREFUSED))`,
    );
  });

  it('says when the answer is not JSON, with an excerpt', async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome to nginx!</body></html>'));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/audio/transcriptions`;
    expect(errorOf(await transcribe(voiceFile(), openai(url), live()))).toBe(
      `the speech-to-text server at ${url} did not answer with JSON (it said: <html><body>Welcome to nginx!</body></html>)`,
    );
  });

  it('says when the JSON has no text', async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"segments":[]}'));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    expect(errorOf(await transcribe(voiceFile(), openai(url), live()))).toContain('answered JSON without a "text" field');
  });
});

describe('transcribing with a local command', () => {
  it('replaces {file} with the audio’s path and returns stdout, trimmed', async () => {
    const config = command(`const fs = require('fs'); const f = process.argv.at(-1); console.log('\\n  heard ' + fs.readFileSync(f, 'utf8').length + ' bytes from ' + f + '  ')`);
    expect(await transcribe(voiceFile(), config, live())).toEqual({ ok: true, text: `heard ${VOICE_BYTES.length} bytes from ${voice}` });
  });

  it('replaces {file} inside an argument too', async () => {
    const config = speechConfigSchema.parse({ type: 'command', command: process.execPath, args: ['-e', 'console.log(process.argv[1])', '--', '--input={file}'] });
    expect(await transcribe(voiceFile(), config, live())).toEqual({ ok: true, text: `--input=${voice}` });
  });

  it('takes silence (nothing printed, exit 0) as an empty transcript', async () => {
    expect(await transcribe(voiceFile(), command(''), live())).toEqual({ ok: true, text: '' });
  });

  it('reports a non-zero exit with the end of stderr', async () => {
    const error = errorOf(await transcribe(voiceFile(), command(`console.error('error: failed to open model ggml-base.bin'); process.exit(3)`), live()));
    expect(error).toBe(`the speech-to-text command "${process.execPath}" exited with code 3: error: failed to open model ggml-base.bin`);
  });

  it('says when the program does not exist, or its working directory does not', async () => {
    const missing = speechConfigSchema.parse({ type: 'command', command: 'no-such-whisper-cli', args: ['{file}'] });
    expect(errorOf(await transcribe(voiceFile(), missing, live()))).toBe('could not start the speech-to-text command "no-such-whisper-cli": not found');
    const badCwd = command('', { cwd: join(dir, 'nowhere') });
    expect(errorOf(await transcribe(voiceFile(), badCwd, live()))).toContain('its working directory');
  });

  it('refuses binary output and output over 1 MB', async () => {
    expect(errorOf(await transcribe(voiceFile(), command(`process.stdout.write(Buffer.from([0x68, 0, 0xff]))`), live()))).toContain('printed binary data');
    expect(errorOf(await transcribe(voiceFile(), command(`process.stdout.write('a'.repeat(1024 * 1024 + 10)); setInterval(() => {}, 1000)`), live()))).toContain(
      'printed more than 1 MB',
    );
  });

  it('kills the program and its grandchild at the timeout', async () => {
    const pids = join(dir, 'pids-timeout');
    const script = `const { spawn } = require('child_process');
      const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      require('fs').writeFileSync(${JSON.stringify(pids)}, process.pid + ' ' + g.pid);
      setInterval(() => {}, 1000);`;
    const result = await transcribe(voiceFile(), command(script, { timeoutMs: 2_500 }), { ...live(), killGraceMs: 300 });
    expect(errorOf(result)).toBe('the speech-to-text engine did not answer within 2.5 s');
    const [pid, grandchild] = (await waitForFile(pids)).split(' ').map(Number);
    expect(await goneSoon(pid!)).toBe(true);
    expect(await goneSoon(grandchild!)).toBe(true);
  });

  it('kills the program when the caller cancels', async () => {
    const pids = join(dir, 'pids-cancel');
    const controller = new AbortController();
    const running = transcribe(voiceFile(), command(`require('fs').writeFileSync(${JSON.stringify(pids)}, String(process.pid)); setInterval(() => {}, 1000)`), {
      signal: controller.signal,
      killGraceMs: 300,
    });
    const pid = Number(await waitForFile(pids));
    controller.abort();
    expect(errorOf(await running)).toBe('the transcription was cancelled');
    expect(await goneSoon(pid)).toBe(true);
  });

  it('does not start at all when already cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(errorOf(await transcribe(voiceFile(), command(''), { signal: controller.signal }))).toBe('the transcription was cancelled');
  });
});

describe('probing the engine', () => {
  it('builds half a second of 16 kHz mono 16-bit silence as a WAV', () => {
    const wav = silentWav(0.5);
    expect(wav.length).toBe(44 + 8_000 * 2);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    expect(wav.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect([wav.readUInt16LE(20), wav.readUInt16LE(22), wav.readUInt32LE(24), wav.readUInt16LE(34)]).toEqual([1, 1, 16_000, 16]);
    expect(wav.toString('ascii', 36, 40)).toBe('data');
    expect(wav.subarray(44).every((b) => b === 0)).toBe(true);
  });

  it('sends the WAV to an endpoint and says ok', async () => {
    const fake = await FakeSpeech.start({ defaultTranscript: '[BLANK_AUDIO]' });
    try {
      expect(await probeSpeech(openai(fake.url), live())).toEqual({ ok: true, text: '[BLANK_AUDIO]' });
      expect(fake.requests[0]).toMatchObject({ filename: 'probe.wav', contentType: 'audio/wav', bytes: silentWav(0.5) });
    } finally {
      await fake.close();
    }
  });

  it('runs a command on the WAV, and cleans the temporary file up', async () => {
    const script = `const f = process.argv.at(-1); const b = require('fs').readFileSync(f); console.log(b.toString('ascii', 0, 4) + ' ' + b.length + ' ' + f)`;
    const result = await probeSpeech(command(script), live());
    if (!result.ok) throw new Error(result.error);
    const [magic, size, path] = result.text.split(' ');
    expect([magic, size]).toEqual(['RIFF', '16044']);
    await expect(readFile(path!)).rejects.toThrow(/ENOENT/);
  });

  it('says why not when the engine is not there', async () => {
    const url = `http://127.0.0.1:${await freePort()}/v1/audio/transcriptions`;
    expect(errorOf(await probeSpeech(openai(url), live()))).toContain('connection refused');
  });
});
