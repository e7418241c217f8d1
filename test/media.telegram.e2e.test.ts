import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentWav } from '../src/main/gateway/media/transcribe';
import { connectApi, userTurns, type ApiSocket } from './support/api-socket';
import { FakeSpeech } from './support/fake-speech';
import { FakeTelegram, type FakeUser } from './support/fake-telegram';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { startOpenAiStub, STUB_MODEL, type OpenAiStub } from './support/openai-stub';
import { waitUntil } from './support/wait';

/**
 * Photos, voice notes and documents sent to the bot on Telegram (the fake Bot
 * API: getFile and file downloads as telegram-bot-api serves them), answered
 * by the real headless gateway (`homing gateway`, built by `npm run build`)
 * with an OpenAI-compatible vision model and an OpenAI-compatible speech
 * server, both on loopback in their real wire formats.
 */

const PDF = readFileSync(fileURLToPath(new URL('./fixtures/media/hello.pdf', import.meta.url)));
const ANSWER = 'Looks like a fern to me.';

/** A JPEG-signed photo, different per call. */
let photos = 0;
function photo(): Buffer {
  photos += 1;
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(5_000, photos), Buffer.from([0xff, 0xd9])]);
}

/** A chat-completions message as a vision model gets it: text, or parts. */
type VisionMessage = { role: string; content: string | { type: string; text?: string; image_url?: { url: string } }[] };
const textOf = (message: VisionMessage) => (typeof message.content === 'string' ? message.content : message.content.map((part) => part.text ?? '').join('\n'));

describe('photos, voice notes and documents from Telegram reach the agent', () => {
  let fake: FakeTelegram;
  let stub: OpenAiStub;
  let speech: FakeSpeech;
  const dirs: string[] = [];
  const gateways: RunningGateway[] = [];
  const sockets: ApiSocket[] = [];
  let people = 0;

  beforeAll(async () => {
    fake = new FakeTelegram();
    await fake.start();
    stub = await startOpenAiStub(() => ANSWER);
    speech = await FakeSpeech.start({ defaultTranscript: 'hello from the walk' });
  });

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    for (const gateway of gateways) await gateway.kill();
    await fake.stop();
    await stub.close();
    await speech.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  function person(): FakeUser {
    people += 1;
    return fake.addUser({ id: 7100000000 + people, first_name: `Person ${people}` });
  }

  function dataDirFor(allowed: FakeUser[]): string {
    const dir = mkdtempSync(join(tmpdir(), 'homing-tg-media-'));
    dirs.push(dir);
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        agent: { type: 'openai', baseUrl: stub.baseUrl, model: STUB_MODEL, images: true },
        speech: { type: 'openai', url: speech.url },
        platforms: { telegram: { apiRoot: fake.apiRoot, tokenEnv: 'TELEGRAM_TOKEN', allowFrom: allowed.map((user) => String(user.id)), pollTimeoutSeconds: 2 } },
      }),
    );
    return dir;
  }

  async function start(dir: string): Promise<{ gateway: RunningGateway; api: ApiSocket }> {
    const polls = () => fake.requests.filter((request) => request.method === 'getUpdates').length;
    const before = polls();
    const gateway = await startHeadlessGateway(['--data-dir', dir], { TELEGRAM_TOKEN: fake.token });
    gateways.push(gateway);
    const api = await connectApi(gateway);
    sockets.push(api);
    await waitUntil('the bot polling', () => polls() > before && fake.polling, 20_000);
    return { gateway, api };
  }

  /** The last message of every request the model got that carries `marker` in its last message. */
  const asked = (marker: string): VisionMessage[] =>
    stub.requests.map((request) => (request.messages as unknown as VisionMessage[]).at(-1)!).filter((message) => textOf(message).includes(marker));

  describe('on one gateway', () => {
    const someone: FakeUser[] = [];
    let gateway: RunningGateway;

    beforeAll(async () => {
      for (let i = 0; i < 4; i++) someone.push(person());
      ({ gateway } = await start(dataDirFor(someone)));
    });

    it('hands a photo to the vision model as image content and delivers its answer', async () => {
      const bytes = photo();
      fake.userSendsPhoto(someone[0]!.id, someone[0]!, bytes, { caption: 'what is this plant?' });
      await waitUntil('the answer', () => fake.sentTo(someone[0]!.id).length === 1, 20_000);
      expect(fake.sentTo(someone[0]!.id)[0]!.text).toBe(ANSWER);
      const [message] = asked('what is this plant?');
      const image = (message!.content as { type: string; image_url?: { url: string } }[]).find((part) => part.type === 'image_url');
      expect(image?.image_url?.url).toBe(`data:image/jpeg;base64,${bytes.toString('base64')}`);
      expect(gateway.output()).not.toContain(fake.token);
    });

    it('transcribes a voice note with the speech server and gives the agent its text, marked as a transcript', async () => {
      const wav = silentWav(0.5);
      fake.userSendsVoice(someone[1]!.id, someone[1]!, wav, { durationS: 3, mimeType: 'audio/wav' });
      await waitUntil('the answer', () => fake.sentTo(someone[1]!.id).length === 1, 20_000);
      expect(speech.requests.some((request) => Buffer.from(request.bytes).equals(wav))).toBe(true);
      expect(asked('[transcript of the voice note, 3 s]: hello from the walk')).toHaveLength(1);
    });

    it('gives the agent a PDF’s text', async () => {
      fake.userSendsDocument(someone[2]!.id, someone[2]!, PDF, { fileName: 'report.pdf', mimeType: 'application/pdf', caption: 'summarise this' });
      await waitUntil('the answer', () => fake.sentTo(someone[2]!.id).length === 1, 20_000);
      const [message] = asked('summarise this');
      expect(textOf(message!)).toContain('[text of the document “report.pdf”]:');
      expect(textOf(message!)).toContain('The quick brown fox jumps over the lazy dog.');
    });

    it('refuses a 50 MB file in words without downloading it, and answers the message', async () => {
      const downloads = fake.downloads.length;
      fake.userSendsDocument(someone[3]!.id, someone[3]!, Buffer.alloc(50_000_000, 1), { fileName: 'holiday.mov.zip', mimeType: 'application/zip', caption: 'can you open this?' });
      await waitUntil('the answer', () => fake.sentTo(someone[3]!.id).length === 1, 20_000);
      const [message] = asked('can you open this?');
      expect(textOf(message!)).toContain('[document “holiday.mov.zip”: could not be fetched — too large (50 MB; the limit is 20 MB)]');
      expect(fake.downloads.length).toBe(downloads);
    });
  });

  it('answers a photo once after a SIGKILL between its message saved and its file fetched', async () => {
    const alice = person();
    const dir = dataDirFor([alice]);
    const first = await start(dir);
    const release = fake.holdDownloads();
    const bytes = photo();
    try {
      fake.userSendsPhoto(alice.id, alice, bytes, { caption: 'saved, then killed' });
      await waitUntil('the message saved', async () => (await userTurns(first.api)).some((text) => text.includes('saved, then killed')), 20_000);
      await waitUntil('its download under way', () => fake.requests.some((request) => request.method === 'getFile'), 20_000);
      await first.gateway.kill();
    } finally {
      release();
    }
    expect(asked('saved, then killed')).toHaveLength(0);
    await start(dir);
    await waitUntil('the answer', () => fake.sentTo(alice.id).length === 1, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(fake.sentTo(alice.id)).toHaveLength(1);
    const requests = asked('saved, then killed');
    expect(requests).toHaveLength(1);
    const image = (requests[0]!.content as { type: string; image_url?: { url: string } }[]).find((part) => part.type === 'image_url');
    expect(image?.image_url?.url).toBe(`data:image/jpeg;base64,${bytes.toString('base64')}`);
  }, 90_000);
});
