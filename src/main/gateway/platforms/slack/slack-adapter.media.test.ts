import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSlack, type FakeSlackChannel, type FakeSlackFileInput, type FakeSlackUser } from '../../../../../test/support/fake-slack';
import { waitUntil } from '../../../../../test/support/wait';
import type { InboundMessage } from '../adapter';
import { bytesOf, refusal } from '../../media/fixtures/media-bodies';
import type { MediaOffer } from '../../media/media';
import { slackConfigSchema } from './config-schema';
import { SlackAdapter } from './slack-adapter';

/**
 * Files from Slack against the fake Slack (its files route on real HTTP,
 * @slack/socket-mode and @slack/web-api against it): what the adapter offers
 * with a message, which messages with only a file reach the agent, and how
 * `openMedia` downloads a file with the bot token and refuses in words what
 * will never come (openSlackMedia's own cases: open-media.test.ts).
 */

const MB = 1_000_000;
const access = { isApproved: () => false, requestPairing: () => undefined, owedPairing: () => [], pairingTold: () => {} };
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const photo = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));

describe('Slack media', () => {
  let fake: FakeSlack;
  let alice: FakeSlackUser;
  let dm: FakeSlackChannel;
  let channel: FakeSlackChannel;
  let dataDir: string;
  let adapter: SlackAdapter;
  let messages: InboundMessage[];

  beforeEach(async () => {
    fake = new FakeSlack({ retryDelaysMs: [0, 500], ackTimeoutMs: 1_000 });
    await fake.start();
    alice = fake.addUser('alice');
    dm = fake.dmWith(alice);
    channel = fake.addChannel('general');
    dataDir = mkdtempSync(join(tmpdir(), 'homing-sl-media-'));
    adapter = new SlackAdapter({
      config: slackConfigSchema.parse({ apiUrl: fake.apiUrl, allowFrom: [alice.id], channels: { [channel.id]: {} } }),
      appToken: fake.appToken,
      botToken: fake.botToken,
      dataDir,
      access,
      reconnectDelayMs: () => 100,
    });
    messages = [];
    adapter.onEvent((event) => {
      if (event.type !== 'message') return;
      messages.push(event.message);
      event.ack?.('saved');
    });
    await adapter.connect();
    await waitUntil('connected', () => adapter.state() === 'connected' && fake.connectedSockets === 1, 15_000);
  });

  afterEach(async () => {
    await adapter.disconnect();
    await fake.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const open = (offer: MediaOffer, maxBytes = 50 * MB, signal = new AbortController().signal) => adapter.openMedia(offer, { signal, maxBytes });

  /** The message handed on for a person's message with files. */
  async function handedOn(where: FakeSlackChannel, files: FakeSlackFileInput[], text = '', mentionBot = false): Promise<InboundMessage> {
    const before = messages.length;
    const sent = fake.userSays({ from: alice, channelId: where.id, text, mentionBot, files });
    await waitUntil('the message handed on', () => messages.length > before, 10_000);
    const message = messages.at(-1)!;
    expect(message.messageRef).toBe(`sl:${where.id}:${sent.ts}`);
    return message;
  }

  it('hands a DM with only a photo on with its offer, and fetches its exact bytes with the bot token', async () => {
    const message = await handedOn(dm, [{ name: 'sunset.png', mime: 'image/png', bytes: photo }]);
    expect(message.text).toBe('[attachment: sunset.png]');
    const offer = message.media![0]!;
    expect(offer).toMatchObject({ kind: 'image', mime: 'image/png', name: 'sunset.png', size: photo.length });
    expect(offer.source).toMatch(new RegExp(`^sl:F0[A-Z0-9]+:http://127\\.0\\.0\\.1:\\d+/files-pri/${fake.teamId}-F0[A-Z0-9]+/download/sunset\\.png$`));
    const body = await open(offer);
    expect(body.size).toBe(photo.length);
    expect(sha(await bytesOf(body))).toBe(sha(photo));
    expect(fake.downloads.map((download) => [download.status, download.served, download.authorization])).toEqual([[200, 'file', 'bot token']]);
  });

  it('offers a clip recorded in Slack as a voice note with its duration', async () => {
    const message = await handedOn(dm, [{ name: 'audio_message.m4a', mime: 'audio/mp4', bytes: Buffer.from('\0\0\0\x20ftypM4A clip'), audioClip: { durationMs: 4_200 } }]);
    expect(message.media).toEqual([expect.objectContaining({ kind: 'voice', mime: 'audio/mp4', name: 'audio_message.m4a', durationS: 4.2 })]);
    expect((await bytesOf(await open(message.media![0]!))).toString()).toBe('\0\0\0\x20ftypM4A clip');
  });

  it('hands on a file in a channel only when its message mentions the bot', async () => {
    fake.userSays({ from: alice, channelId: channel.id, text: 'not for the bot', files: [{ name: 'a.png', mime: 'image/png', bytes: photo }] });
    const addressed = await handedOn(channel, [{ name: 'b.png', mime: 'image/png', bytes: photo }], '', true);
    expect(addressed.text).toBe('[attachment: b.png]');
    expect(messages).toHaveLength(1);
    expect(addressed.media).toEqual([expect.objectContaining({ name: 'b.png' })]);
  });

  it('refuses in words, for good, a file the token is not accepted for (Slack’s sign-in page) and a deleted one', async () => {
    const message = await handedOn(dm, [{ name: 'a.pdf', mime: 'application/pdf', bytes: photo }]);
    const offer = message.media![0]!;
    fake.filesRead = false;
    const page = await refusal(open(offer));
    expect(page.permanent).toBe(true);
    expect(page.message).toMatch(/^the file was not sent: Slack answered with a web page \(its sign-in page\) instead of the file, .* files:read scope/);
    expect(page.message).not.toContain(fake.botToken);
    fake.filesRead = true;
    const fileId = /^sl:(F[A-Z0-9]+):/.exec(offer.source)![1]!;
    fake.deleteFile(fileId);
    expect(await refusal(open(offer))).toMatchObject({ permanent: true, message: 'the file could not be downloaded (HTTP 404: deleted, expired or not allowed)' });
  });

  it('describes a deleted file in the text of a message read from history, without an offer', async () => {
    await adapter.disconnect();
    const sent = fake.userSays({ from: alice, channelId: dm.id, text: 'here it was', files: [{ name: 'gone.png', mime: 'image/png', bytes: photo }] });
    fake.deleteFile(sent.files![0]!.id);
    await adapter.connect();
    await waitUntil('caught up', () => messages.some((message) => message.messageRef === `sl:${dm.id}:${sent.ts}`), 15_000);
    const message = messages.find((candidate) => candidate.messageRef === `sl:${dm.id}:${sent.ts}`)!;
    expect(message.text).toBe('here it was\n[attachment — not available to Homing: deleted]');
    expect(message).not.toHaveProperty('media');
  });

  it('refuses a file declared over the limit without reading it, and a link off Slack outright', async () => {
    const message = await handedOn(dm, [{ name: 'big.zip', mime: 'application/zip', bytes: Buffer.alloc(3 * MB) }]);
    const tooBig = await refusal(open(message.media![0]!, 2 * MB));
    expect([tooBig.permanent, tooBig.message]).toEqual([true, 'too large (3 MB; the limit is 2 MB)']);
    const elsewhere = await refusal(open({ kind: 'image', source: 'sl:F0ABCDEFGH:https://evil.example/files-pri/T1-F0ABCDEFGH/x.png' }));
    expect([elsewhere.permanent, elsewhere.message]).toEqual([true, 'the image has no Slack link Homing can use']);
    expect(fake.downloads.map((download) => download.status)).toEqual([200]);
  });

  it('fetches without a Socket Mode connection, hangs while downloads are held, ends when stopped, and serves once released', async () => {
    const message = await handedOn(dm, [{ name: 'a.png', mime: 'image/png', bytes: photo }]);
    const offer = message.media![0]!;
    await adapter.disconnect();
    const release = fake.holdDownloads();
    const stop = new AbortController();
    const held = refusal(open(offer, 50 * MB, stop.signal));
    await waitUntil('the download held', () => fake.downloads.length === 1, 5_000);
    stop.abort();
    expect(await held).toMatchObject({ permanent: false, message: 'the image could not be downloaded from Slack: stopped' });
    const waiting = open(offer);
    await waitUntil('the second download held', () => fake.downloads.length === 2, 5_000);
    release();
    expect(sha(await bytesOf(await waiting))).toBe(sha(photo));
  });
});
