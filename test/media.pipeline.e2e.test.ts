import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MediaFile, TranscriptPage } from '../src/shared/api';
import { silentWav } from '../src/main/gateway/media/transcribe';
import { FakeSpeech } from './support/fake-speech';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { startOpenAiStub, STUB_MODEL, type OpenAiStub } from './support/openai-stub';

/**
 * Photos, voice notes and documents through one in-process gateway, sent from
 * the window's own chat (uploaded in pieces over the API, as the window does),
 * answered by an OpenAI-compatible server that takes images and a speech
 * server for voice notes — both on loopback, in their real wire formats.
 */

const PDF = readFileSync(fileURLToPath(new URL('./fixtures/media/hello.pdf', import.meta.url)));
/** A JPEG's signature and some bytes: what a photo's file starts with. */
const PHOTO = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(3000, 0x42), Buffer.from([0xff, 0xd9])]);

/** A chat-completions message as a vision model gets it: text, or parts. */
type VisionMessage = { role: string; content: string | { type: string; text?: string; image_url?: { url: string } }[] };

describe('media from the window’s own chat reach the agent', () => {
  let stub: OpenAiStub;
  let speech: FakeSpeech;
  let harness: GatewayHarness | undefined;

  beforeAll(async () => {
    stub = await startOpenAiStub(() => 'Looks like a fern.');
    speech = await FakeSpeech.start({ defaultTranscript: 'hello from the walk' });
  });
  afterAll(async () => {
    await stub.close();
    await speech.close();
  });
  afterEach(async () => {
    if (harness) rmSync(harness.dataDir, { recursive: true, force: true });
    await harness?.close();
    harness = undefined;
  });

  async function start(config: Record<string, unknown> = {}): Promise<GatewayHarness> {
    harness = await startGatewayHarness({
      agent: { type: 'openai', baseUrl: stub.baseUrl, model: STUB_MODEL, images: true },
      speech: { type: 'openai', url: speech.url },
      ...config,
    });
    return harness;
  }

  async function call<T>(method: string, params: unknown): Promise<T> {
    const result = await harness!.gateway.api.dispatch(method as never, params as never);
    if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
    return result.value as T;
  }

  /** Uploads a file in pieces of `piece` bytes, as the window does; returns its upload id. */
  async function upload(name: string, bytes: Buffer, mime: string, piece = 200_000): Promise<string> {
    const uploadId = `up-${Math.random().toString(36).slice(2, 12)}`;
    for (let offset = 0; offset < bytes.length || offset === 0; offset += piece) {
      const data = bytes.subarray(offset, offset + piece);
      const done = offset + piece >= bytes.length;
      await call('uploadLocalFile', { uploadId, offset, dataBase64: data.toString('base64'), name, mime, done });
      if (done) break;
    }
    return uploadId;
  }

  /** Sends a message with files and waits for its reply's record; returns the request the agent got. */
  async function ask(text: string, files: string[]): Promise<{ sessionId: string; message: VisionMessage }> {
    const before = stub.requests.length;
    await call('sendLocalMessage', { text, files });
    const recorded = await harness!.waitForNext('reply.recorded', undefined, 20_000);
    const request = stub.requests.slice(before).at(-1) as unknown as { messages: VisionMessage[] } | undefined;
    if (!request) throw new Error('the agent was not asked');
    return { sessionId: recorded.sessionId, message: request.messages.at(-1)! };
  }

  const textOf = (message: VisionMessage) => (typeof message.content === 'string' ? message.content : message.content.map((part) => part.text ?? '').join('\n'));

  it('sends a photo to a model that takes images as image content, the bytes as sent', async () => {
    await start();
    const { sessionId, message } = await ask('what is this plant?', [await upload('plant.jpg', PHOTO, 'image/jpeg')]);
    expect(Array.isArray(message.content)).toBe(true);
    const parts = message.content as { type: string; text?: string; image_url?: { url: string } }[];
    expect(parts[0]).toMatchObject({ type: 'text' });
    expect(parts[0]!.text).toContain('what is this plant?');
    const image = parts.find((part) => part.type === 'image_url');
    expect(image?.image_url?.url).toBe(`data:image/jpeg;base64,${PHOTO.toString('base64')}`);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.state === 'delivered', 10_000);

    // The window: the message's photo, kept, handed over typed by its bytes.
    const page = await call<TranscriptPage>('getTranscript', { sessionId });
    const user = page.messages.find((item) => item.role === 'user');
    expect(user).toMatchObject({ role: 'user', media: [{ kind: 'image', name: 'plant.jpg', state: 'ready', transcript: null }] });
    const mediaId = (user as { media: readonly { id: string }[] }).media[0]!.id;
    const file = await call<MediaFile>('getMedia', { sessionId, mediaId });
    expect(file).toMatchObject({ mime: 'image/jpeg', inline: true, size: PHOTO.length });
    expect(Buffer.from(file.dataBase64, 'base64').equals(PHOTO)).toBe(true);
    // Kept in the data directory under a name of Homing's, readable by the user only.
    const dir = join(harness!.dataDir, 'media', sessionId);
    expect(readdirSync(dir)).toContain(`${mediaId}.jpg`);
    const overview = await call<{ media: { files: number; keepDays: number } }>('getOverview', undefined);
    expect(overview.media).toMatchObject({ files: 1, keepDays: 30 });
  });

  it('tells a model that does not take images that a photo came, in words', async () => {
    await start({ agent: { type: 'openai', baseUrl: stub.baseUrl, model: STUB_MODEL } });
    const { message } = await ask('and this one?', [await upload('leaf.jpg', PHOTO, 'image/jpeg')]);
    expect(typeof message.content).toBe('string');
    expect(message.content).toContain('[image “leaf.jpg”: not shown to you — this agent is not set up to take images]');
  });

  it('transcribes a voice note with the speech server and gives the agent the transcript, marked as one', async () => {
    await start();
    const before = speech.requests.length;
    const wav = silentWav(0.5);
    const { sessionId, message } = await ask('', [await upload('memo.wav', wav, 'audio/wav')]);
    expect(speech.requests.length).toBe(before + 1);
    expect(Buffer.from(speech.requests.at(-1)!.bytes).equals(wav)).toBe(true);
    expect(textOf(message)).toContain('[transcript of the audio “memo.wav”]: hello from the walk');
    const page = await call<TranscriptPage>('getTranscript', { sessionId });
    expect(page.messages.find((item) => item.role === 'user')).toMatchObject({ media: [{ kind: 'audio', transcript: 'hello from the walk', state: 'ready' }] });
    // The next turn's history still has what was said, without transcribing it again.
    const requests = speech.requests.length;
    await harness!.waitFor('delivery.changed', (event) => event.delivery.state === 'delivered', 10_000);
    await ask('what did I say?', []);
    const history = (stub.requests.at(-1) as unknown as { messages: VisionMessage[] }).messages.map(textOf);
    expect(history.some((text) => text.includes('[transcript of the audio “memo.wav”]: hello from the walk'))).toBe(true);
    expect(speech.requests.length).toBe(requests);
  });

  it('gives the agent a PDF’s text', async () => {
    await start();
    const { message } = await ask('summarise this', [await upload('report.pdf', PDF, 'application/pdf')]);
    const text = textOf(message);
    expect(text).toContain('[text of the document “report.pdf”]:');
    expect(text).toContain('The quick brown fox jumps over the lazy dog.');
  });

  it('refuses a file over the limit in words, and keeps nothing of it', async () => {
    await start({ media: { maxFileMB: 1 } });
    const big = Buffer.alloc(1_500_000, 1);
    await expect(upload('big.bin', big, 'application/octet-stream', 500_000)).rejects.toThrow(/bad-request: too large \(1\.5 MB; the limit is 1 MB\)/);
    const uploads = join(harness!.dataDir, 'media', 'uploads');
    expect(existsSync(uploads) ? readdirSync(uploads) : []).toEqual([]);
  });

  it('says when the speech server fails, and answers all the same', async () => {
    await start();
    speech.failNext(3, 500, 'model not loaded');
    const { message } = await ask('listen', [await upload('memo.wav', silentWav(0.5), 'audio/wav')]);
    expect(textOf(message)).toMatch(/\[audio “memo\.wav”: could not be transcribed — .*500/);
    await harness!.waitFor('delivery.changed', (event) => event.delivery.state === 'delivered', 10_000);
  });

  it('refuses a piece that does not continue the upload, naming where to go on', async () => {
    await start();
    await call('uploadLocalFile', { uploadId: 'resume-test', offset: 0, dataBase64: Buffer.alloc(10).toString('base64'), name: 'a.txt' });
    await expect(call('uploadLocalFile', { uploadId: 'resume-test', offset: 5, dataBase64: 'AAAA', name: 'a.txt' })).rejects.toThrow(/send from 10/);
    await expect(call('sendLocalMessage', { text: 'x', files: ['resume-test'] })).rejects.toThrow(/no complete upload/);
  });
});
