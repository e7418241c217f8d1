import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeDiscord, type FakeChannel, type FakeDiscordUser, type FakeMessage } from '../../../../../test/support/fake-discord';
import { waitUntil } from '../../../../../test/support/wait';
import type { InboundMessage } from '../adapter';
import { MediaFetchError, type MediaOffer } from '../../media/media';
import { discordConfigSchema } from './config-schema';
import { DiscordAdapter } from './discord-adapter';
import { openDiscordMedia } from './open-media';
import { bytesOf, refusal } from '../../media/fixtures/media-bodies';

/**
 * Files from Discord against the fake Discord (its signed CDN links on real
 * HTTP, discord.js against its REST and Gateway): what the adapter offers with
 * a message, and how `openMedia` downloads the file, renews an expired link by
 * fetching the message again, and refuses in words what will never come.
 */

const MB = 1_000_000;
const DAY_MS = 24 * 60 * 60 * 1000;
const access = { isApproved: () => false, requestPairing: () => undefined, owedPairing: () => [], pairingTold: () => {} };
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('Discord media', () => {
  let fake: FakeDiscord;
  let alice: FakeDiscordUser;
  let dm: FakeChannel;
  let dataDir: string;
  const adapters: DiscordAdapter[] = [];

  beforeEach(async () => {
    fake = new FakeDiscord({ heartbeatIntervalMs: 5_000 });
    await fake.start();
    alice = fake.addUser('alice');
    dm = fake.dmChannel(alice);
    dataDir = mkdtempSync(join(tmpdir(), 'homing-dc-media-'));
  });

  afterEach(async () => {
    for (const adapter of adapters.splice(0)) await adapter.disconnect();
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function adapter(): DiscordAdapter {
    const config = discordConfigSchema.parse({ apiUrl: fake.apiUrl, allowFrom: [alice.id] });
    const made = new DiscordAdapter({ config, token: fake.token, dataDir, access, reconnectDelayMs: () => 100 });
    adapters.push(made);
    return made;
  }

  async function connected(on: DiscordAdapter): Promise<InboundMessage[]> {
    const messages: InboundMessage[] = [];
    on.onEvent((event) => {
      if (event.type !== 'message') return;
      messages.push(event.message);
      event.ack?.('saved');
    });
    await on.connect();
    await waitUntil('connected', () => on.state() === 'connected', 15_000);
    return messages;
  }

  const open = (on: DiscordAdapter, offer: MediaOffer, maxBytes = 50 * MB, signal = new AbortController().signal) => on.openMedia(offer, { signal, maxBytes });



  /** The offer the adapter hands on for a person's message with a file. */
  async function offerFor(on: DiscordAdapter, messages: InboundMessage[], send: () => FakeMessage): Promise<MediaOffer> {
    const before = messages.length;
    const sent = send();
    await waitUntil('the message handed on', () => messages.length > before, 10_000);
    const message = messages.at(-1)!;
    expect(message.messageRef).toBe(`dc:${dm.id}:${sent.id}`);
    return message.media![0]!;
  }

  const photo = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));

  it('hands a message with a photo on with its offer, fetches its exact bytes without the bot token, and a text message with none', async () => {
    const discord = adapter();
    const messages = await connected(discord);
    const offer = await offerFor(discord, messages, () => fake.userSays({ from: alice, channelId: dm.id, content: 'sunset', files: [{ name: 'sunset.png', mime: 'image/png', bytes: photo }] }));
    expect(messages[0]!.text).toBe('sunset\n[attachment: sunset.png]');
    expect(offer).toMatchObject({ kind: 'image', mime: 'image/png', name: 'sunset.png', size: photo.length });
    fake.userSays({ from: alice, channelId: dm.id, content: 'just words' });
    await waitUntil('the text handed on', () => messages.length === 2, 10_000);
    expect(messages[1]).not.toHaveProperty('media');

    const body = await open(discord, offer);
    expect(body.size).toBe(photo.length);
    expect(sha(await bytesOf(body))).toBe(sha(photo));
    expect(fake.downloads.map((download) => [download.status, download.authorization])).toEqual([[200, false]]);
  });

  it('offers a voice message as a voice note with its duration', async () => {
    const discord = adapter();
    const messages = await connected(discord);
    const offer = await offerFor(discord, messages, () => fake.userSendsVoice({ from: alice, channelId: dm.id, bytes: Buffer.from('OggS\0voice'), durationS: 4.2 }));
    expect(offer).toMatchObject({ kind: 'voice', mime: 'audio/ogg', name: 'voice-message.ogg', size: 10, durationS: 4.2 });
    expect((await bytesOf(await open(discord, offer))).toString()).toBe('OggS\0voice');
  });

  it('renews an expired link by fetching its message again, and downloads the fresh one', async () => {
    const discord = adapter();
    const messages = await connected(discord);
    const offer = await offerFor(discord, messages, () => fake.userSays({ from: alice, channelId: dm.id, content: '', files: [{ name: 'a.pdf', mime: 'application/pdf', bytes: photo }] }));
    fake.advanceLinkClock(DAY_MS + 60_000);
    // The adapter's clock does not know the fake's: the expired link is tried, refused (404), then renewed.
    expect(sha(await bytesOf(await open(discord, offer)))).toBe(sha(photo));
    expect(fake.downloads.map((download) => download.status)).toEqual([404, 200]);
    expect(fake.requests.filter((request) => request.method === 'GET' && /\/messages\/\d+$/.test(request.path)).map((request) => request.status)).toEqual([200]);
  });

  it('refuses for good, in words, a file whose message was deleted', async () => {
    const discord = adapter();
    const messages = await connected(discord);
    const sent: FakeMessage[] = [];
    const offer = await offerFor(discord, messages, () => {
      sent.push(fake.userSays({ from: alice, channelId: dm.id, content: '', files: [{ name: 'a.png', mime: 'image/png', bytes: photo }] }));
      return sent[0]!;
    });
    fake.deleteMessage(dm.id, sent[0]!.id);
    const error = await refusal(open(discord, offer));
    expect(error.permanent).toBe(true);
    expect(error.message).toMatch(/^the image is no longer on Discord: the link expired and its message cannot be read again \(deleted, or out of the bot's reach: 404 10008 /);
  });

  it('refuses a file declared over the limit without reading it, and a link off Discord outright', async () => {
    const discord = adapter();
    const messages = await connected(discord);
    const offer = await offerFor(discord, messages, () => fake.userSays({ from: alice, channelId: dm.id, content: '', files: [{ name: 'big.bin', mime: 'application/zip', bytes: Buffer.alloc(3 * MB) }] }));
    const tooBig = await refusal(open(discord, offer, 2 * MB));
    expect([tooBig.permanent, tooBig.message]).toEqual([true, 'too large (3 MB; the limit is 2 MB)']);
    const elsewhere = await refusal(open(discord, { kind: 'image', source: `dc:1:2:3:https://evil.example/attachments/1/3/x.png` }));
    expect([elsewhere.permanent, elsewhere.message]).toEqual([true, 'the image has no Discord link Homing can use']);
  });

  it('says an expired link cannot be renewed while not connected, and tries again later (temporary)', async () => {
    const discord = adapter();
    const messages = await connected(discord);
    const offer = await offerFor(discord, messages, () => fake.userSays({ from: alice, channelId: dm.id, content: '', files: [{ name: 'a.png', mime: 'image/png', bytes: photo }] }));
    await discord.disconnect();
    fake.advanceLinkClock(DAY_MS + 60_000);
    const error = await refusal(open(discord, offer));
    expect([error.permanent, error.message]).toEqual([false, 'the link to the image expired, and Homing is not connected to Discord to renew it']);
  });

  it('hangs while the CDN holds downloads, ends when stopped, and serves once released', async () => {
    const discord = adapter();
    const messages = await connected(discord);
    const offer = await offerFor(discord, messages, () => fake.userSays({ from: alice, channelId: dm.id, content: '', files: [{ name: 'a.png', mime: 'image/png', bytes: photo }] }));
    const release = fake.holdDownloads();
    const stop = new AbortController();
    const held = refusal(open(discord, offer, 50 * MB, stop.signal));
    await waitUntil('the download held', () => fake.downloads.length === 1, 5_000);
    stop.abort();
    expect(await held).toMatchObject({ permanent: false, message: 'the image could not be downloaded from Discord: stopped' });
    const waiting = open(discord, offer);
    await waitUntil('the second download held', () => fake.downloads.length === 2, 5_000);
    release();
    expect(sha(await bytesOf(await waiting))).toBe(sha(photo));
  });
});

describe('openDiscordMedia without the adapter', () => {
  const source = 'dc:1:2:3:https://cdn.discordapp.com/attachments/1/3/a.png?ex=ffffffff&is=0&hm=0';
  const deps = (answer: () => Response | Promise<Response>, refetch = async (): Promise<unknown> => ({ attachments: [] })) => ({
    apiUrl: 'https://discord.com/api',
    now: () => 0,
    refetch,
    fetch: (async () => answer()) as typeof fetch,
  });
  const signal = new AbortController().signal;
  const open = (d: ReturnType<typeof deps>) => openDiscordMedia({ kind: 'document', source }, { signal, maxBytes: MB }, d).then(
    () => undefined,
    (error: unknown) => error as MediaFetchError,
  );

  it('takes a 5xx or a network error as temporary, and a 404 whose renewal finds no file as permanent', async () => {
    expect(await open(deps(() => new Response('x', { status: 503 })))).toMatchObject({ permanent: false, message: 'the file could not be downloaded (HTTP 503)' });
    expect(await open(deps(() => Promise.reject(new TypeError('fetch failed', { cause: new Error('ECONNRESET') }))))).toMatchObject({
      permanent: false,
      message: 'the file could not be downloaded from Discord: fetch failed: ECONNRESET',
    });
    expect(await open(deps(() => new Response('gone', { status: 404 })))).toMatchObject({ permanent: true, message: 'the file is no longer on Discord: the link expired and the message no longer carries the file' });
  });

  it('renews a link whose `ex` has passed before trying it', async () => {
    const asked: string[] = [];
    const fresh = 'https://cdn.discordapp.com/attachments/1/3/a.png?ex=fffffffff&is=1&hm=2';
    const body = await openDiscordMedia(
      { kind: 'image', source },
      { signal, maxBytes: MB },
      {
        apiUrl: 'https://discord.com/api',
        now: () => 0x100000000 * 1000,
        refetch: async () => ({ attachments: [{ id: '9', url: 'https://cdn.discordapp.com/x' }, { id: '3', url: fresh }] }),
        fetch: (async (url: string) => {
          asked.push(url);
          return new Response('bytes', { headers: { 'content-length': '5' } });
        }) as typeof fetch,
      },
    );
    expect([asked, body.size]).toEqual([[fresh], 5]);
  });

  it('refuses a renewed link that points off Discord, and one refused again', async () => {
    const elsewhere = async () => ({ attachments: [{ id: '3', url: 'https://evil.example/a.png' }] });
    expect(await open(deps(() => new Response('', { status: 404 }), elsewhere))).toMatchObject({ permanent: true, message: 'the file has no Discord link Homing can use (the renewed link points elsewhere)' });
    const same = async () => ({ attachments: [{ id: '3', url: 'https://cdn.discordapp.com/attachments/1/3/a.png?ex=1' }] });
    expect(await open(deps(() => new Response('', { status: 403 }), same))).toMatchObject({
      permanent: true,
      message: 'the file is no longer on Discord: the link expired and a renewed one was refused too (HTTP 403)',
    });
  });
});
