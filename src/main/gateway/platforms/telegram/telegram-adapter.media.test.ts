import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeTelegram, type FakeFile, type FakeUser } from '../../../../../test/support/fake-telegram';
import { waitUntil } from '../../../../../test/support/wait';
import type { InboundMessage } from '../adapter';
import { MediaFetchError, type MediaOffer } from '../../media/media';
import { telegramConfigSchema } from './config-schema';
import { TelegramAdapter } from './telegram-adapter';
import { bytesOf, refusal } from '../../media/fixtures/media-bodies';

/**
 * Photos, voice notes and files from Telegram, against the fake Bot API
 * (getFile, then the download route): what the adapter offers with a
 * message, and how `openMedia` fetches or refuses the file. The bot token
 * is in both URLs, so every failure is checked for it.
 */

const MB = 1_000_000;
const access = { isApproved: () => false, requestPairing: () => undefined, owedPairing: () => [], pairingTold: () => {} };

describe('Telegram media', () => {
  let fake: FakeTelegram;
  let alice: FakeUser;
  let dataDir: string;
  const adapters: TelegramAdapter[] = [];
  const servers: Server[] = [];

  beforeEach(async () => {
    fake = new FakeTelegram();
    await fake.start();
    alice = fake.addUser({ id: 7000000001, first_name: 'Alice' });
    dataDir = mkdtempSync(join(tmpdir(), 'homing-tg-media-'));
  });

  afterEach(async () => {
    for (const adapter of adapters.splice(0)) await adapter.disconnect();
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function adapter(apiRoot = fake.apiRoot, token = fake.token): TelegramAdapter {
    const config = telegramConfigSchema.parse({ apiRoot, allowFrom: [String(alice.id)], pollTimeoutSeconds: 1 });
    const made = new TelegramAdapter({ config, token, dataDir, access, conflictDelayMs: 100 });
    adapters.push(made);
    return made;
  }

  const offerOf = (file: FakeFile, kind: MediaOffer['kind'] = 'image'): MediaOffer => ({ kind, source: file.fileId });
  const open = (on: TelegramAdapter, offer: MediaOffer, maxBytes = 50 * MB, signal = quietSignal()) => on.openMedia(offer, { signal, maxBytes });



  function expectNoToken(error: MediaFetchError, token = fake.token): void {
    expect(error.message).not.toContain(token);
    expect(error.message).not.toContain(token.split(':')[1]);
    expect(String(error.stack)).not.toContain(token);
  }

  it('hands a photo message on with one offer (its largest size), and a text message with none', async () => {
    const telegram = adapter();
    const messages: InboundMessage[] = [];
    telegram.onEvent((event) => {
      if (event.type !== 'message') return;
      messages.push(event.message);
      event.ack?.('saved');
    });
    await telegram.connect();
    const { file } = fake.userSendsPhoto(alice.id, alice, Buffer.from('jpeg bytes'), { caption: 'sunset' });
    fake.userSays({ from: alice, text: 'just words' });
    await waitUntil('both messages handed on', () => messages.length === 2, 10_000);
    expect(messages[0]).toMatchObject({ text: '[photo: sunset]', media: [{ kind: 'image', source: file.fileId, mime: 'image/jpeg', size: 10 }] });
    expect(messages[1]!.text).toBe('just words');
    expect(messages[1]).not.toHaveProperty('media');
  });

  it('fetches a photo before any poll (after a restart) with its exact bytes', async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
    const { file } = fake.userSendsPhoto(alice.id, alice, bytes, { width: 2000, height: 1500 });
    const telegram = adapter();
    const body = await open(telegram, offerOf(file));
    expect(body.size).toBe(bytes.length);
    expect((await bytesOf(body)).equals(bytes)).toBe(true);
    expect(fake.requests.map((request) => request.method)).toEqual(['getFile']);
    expect(fake.downloads.map((download) => [download.fileId, download.status])).toEqual([[file.fileId, 200]]);
  });

  it("refuses a 21 MB file in words (Telegram's 20 MB limit for bots), without downloading anything", async () => {
    const { file } = fake.userSendsDocument(alice.id, alice, Buffer.alloc(21 * MB), { fileName: 'big.zip', mimeType: 'application/zip' });
    const error = await refusal(open(adapter(), offerOf(file, 'document')));
    expect(error.permanent).toBe(true);
    expect(error.message).toBe("the file is too large for a bot to download (Telegram's limit is 20 MB)");
    expect(fake.downloads).toEqual([]);
  });

  it('refuses a file getFile declares over the limit before downloading it', async () => {
    const { file } = fake.userSendsVoice(alice.id, alice, Buffer.alloc(3 * MB), { durationS: 600 });
    const error = await refusal(open(adapter(), offerOf(file, 'voice'), 2 * MB));
    expect(error.permanent).toBe(true);
    expect(error.message).toBe('too large (3 MB; the limit is 2 MB)');
    expect(fake.requests.map((request) => request.method)).toEqual(['getFile']);
    expect(fake.downloads).toEqual([]);
  });

  it('takes a 404 download (deleted, expired) and an unknown file id as permanent; a 500 and a file Telegram cannot fetch now as temporary', async () => {
    const telegram = adapter();
    const gone = fake.userSendsDocument(alice.id, alice, Buffer.from('x'), { fileName: 'a.txt' }).file;
    fake.failNextDownload(gone.fileId, 404);
    const missing = await refusal(open(telegram, offerOf(gone, 'document')));
    expect([missing.permanent, missing.message]).toEqual([true, 'the file could not be downloaded (HTTP 404: deleted, expired or not allowed)']);

    const flaky = fake.userSendsVoice(alice.id, alice, Buffer.from('ogg')).file;
    fake.failNextDownload(flaky.fileId, 500);
    const failed = await refusal(open(telegram, offerOf(flaky, 'voice')));
    expect([failed.permanent, failed.message]).toEqual([false, 'the voice message could not be downloaded (HTTP 500)']);
    expect((await bytesOf(await open(telegram, offerOf(flaky, 'voice')))).toString()).toBe('ogg');

    const unknown = await refusal(open(telegram, { kind: 'image', source: 'AgACAgIAAxkBAAIunknown' }));
    expect([unknown.permanent, unknown.message]).toEqual([true, 'Telegram refused to hand over the image (400 Bad Request: invalid file_id)']);

    // telegram-bot-api says this for any download that failed on its side, 5xx and 429 included.
    const deleted = fake.userSendsVoice(alice.id, alice, Buffer.from('ogg')).file;
    fake.deleteFile(deleted.fileId);
    const unavailable = await refusal(open(telegram, offerOf(deleted, 'voice')));
    expect(unavailable.permanent).toBe(false);
    expect(unavailable.message).toContain('wrong file_id or the file is temporarily unavailable');

    fake.fault((method) => (method === 'getFile' ? { kind: 'error', code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } } : undefined));
    expect((await refusal(open(telegram, offerOf(flaky, 'voice')))).permanent).toBe(false);
  });

  it('never names the token: not for a refused token, a dead server, a broken download or an abort', async () => {
    const errors: MediaFetchError[] = [];
    const { file } = fake.userSendsDocument(alice.id, alice, Buffer.from('x'), { fileName: 'a.txt' });

    // A refused token: Telegram may accept it again once it is fixed, so not permanent.
    const wrongToken = '987654321:AAWrongTokenWrongTokenWrong_abcdefgh';
    const refused = await refusal(open(adapter(fake.apiRoot, wrongToken), offerOf(file, 'document')));
    expect(refused.permanent).toBe(false);
    expectNoToken(refused, wrongToken);

    // Nothing listening: node-fetch's error names the URL, token and all.
    const dead = await refusal(open(adapter(`http://127.0.0.1:${await closedPort()}`), offerOf(file, 'document')));
    expect(dead.permanent).toBe(false);
    expect(dead.message).toContain('ECONNREFUSED');
    expect(dead.message).toContain('/bot[token]/getFile');
    errors.push(dead);

    // getFile answers; the download breaks off after a few bytes of the ones it promised.
    const breaking = await listen(
      createServer((req, res) => {
        if (req.url?.startsWith('/file/')) {
          res.writeHead(200, { 'content-length': '1000' });
          res.write('only a few bytes');
          setTimeout(() => res.destroy(), 50);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, result: { file_id: file.fileId, file_unique_id: 'u', file_size: 1000, file_path: 'documents/file_0.txt' } }));
      }),
    );
    const body = await open(adapter(breaking), offerOf(file, 'document'));
    const broken = await refusal(bytesOf(body));
    expect(broken.permanent).toBe(false);
    errors.push(broken);

    // Aborted by the caller (the gateway stopping) while getFile waits.
    const hanging = await listen(createServer(() => {}));
    const controller = new AbortController();
    const attempt = open(adapter(hanging), offerOf(file, 'document'), 50 * MB, controller.signal);
    setTimeout(() => controller.abort(), 100);
    const aborted = await refusal(attempt);
    expect(aborted.permanent).toBe(false);
    errors.push(aborted);

    fake.failNextDownload(file.fileId, 500);
    errors.push(await refusal(open(adapter(), offerOf(file, 'document'))));

    // A server that echoes the token in a long description: redacted before it is cut, so no piece of it is left.
    const removeFault = fake.fault((method) => (method === 'getFile' ? { kind: 'error', code: 400, description: `Bad Request: ${'x'.repeat(270)} ${fake.token}` } : undefined));
    const echoed = await refusal(open(adapter(), offerOf(file, 'document')));
    removeFault();
    expect(echoed.message).not.toContain(fake.token.slice(0, 12));
    errors.push(echoed);
    for (const error of errors) expectNoToken(error);
  });

  it('gives up a download that hangs when the caller aborts, as a temporary failure', async () => {
    const { file } = fake.userSendsPhoto(alice.id, alice, Buffer.from('jpeg'));
    const release = fake.holdDownloads();
    const controller = new AbortController();
    const attempt = open(adapter(), offerOf(file), 50 * MB, controller.signal);
    await waitUntil('getFile answered', () => fake.requests.some((request) => request.method === 'getFile'), 5_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    const error = await refusal(attempt);
    expect(error.permanent).toBe(false);
    expectNoToken(error);
    await waitUntil('the abandoned download recorded', () => fake.downloads.length === 1, 5_000);
    expect(fake.downloads[0]).toMatchObject({ fileId: file.fileId, status: 0 });
    release();
  });

  it('does not follow a download path out of the bot\'s directory', async () => {
    const { file } = fake.userSendsDocument(alice.id, alice, Buffer.from('x'), { fileName: 'a.txt' });
    fake.fault((method) => (method === 'getFile' ? { kind: 'raw', status: 200, body: JSON.stringify({ ok: true, result: { file_id: file.fileId, file_path: '../../bot/getMe' } }) } : undefined));
    const error = await refusal(open(adapter(), offerOf(file, 'document')));
    expect([error.permanent, error.message]).toEqual([false, 'Telegram gave no usable download path for the file']);
    expect(fake.downloads).toEqual([]);
  });

  async function listen(server: Server): Promise<string> {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
});

/** A signal nobody aborts. */
function quietSignal(): AbortSignal {
  return new AbortController().signal;
}

/** A port with nothing listening: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  await new Promise((resolve) => server.close(resolve));
  return port;
}
