import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSignalCli, type FakeSignalPerson } from '../../../../../test/support/fake-signal-cli';
import { waitUntil } from '../../../../../test/support/wait';
import type { InboundMessage } from '../adapter';
import { bytesOf, refusal } from '../../media/fixtures/media-bodies';
import type { MediaOffer } from '../../media/media';
import { signalConfigSchema } from './config-schema';
import { answerLimit, openSignalMedia } from './open-media';
import { SignalAdapter } from './signal-adapter';

/**
 * Files from Signal against the fake signal-cli daemon (its real JSON-RPC
 * lines on TCP): what the adapter offers with a message, and how `openMedia`
 * fetches the file with `getAttachment`, bounds the answer, and refuses in
 * words what will never come.
 */

const MB = 1_000_000;
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('Signal media', () => {
  let fake: FakeSignalCli;
  let alice: FakeSignalPerson;
  let dataDir: string;
  const adapters: SignalAdapter[] = [];

  beforeEach(async () => {
    fake = await new FakeSignalCli().start();
    alice = fake.addPerson('alice');
    dataDir = mkdtempSync(join(tmpdir(), 'homing-sg-media-'));
  });

  afterEach(async () => {
    for (const adapter of adapters.splice(0)) await adapter.disconnect();
    await fake.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function adapter(): SignalAdapter {
    const config = signalConfigSchema.parse({ daemon: fake.address, account: fake.account.number, allowFrom: [alice.number] });
    const access = { isApproved: () => false, requestPairing: () => undefined, owedPairing: () => [], pairingTold: () => {} };
    const made = new SignalAdapter({ config, dataDir, access, reconnectDelayMs: () => 100 });
    adapters.push(made);
    return made;
  }

  async function connected(on: SignalAdapter): Promise<InboundMessage[]> {
    const messages: InboundMessage[] = [];
    on.onEvent((event) => {
      if (event.type !== 'message') return;
      messages.push(event.message);
      event.ack?.('saved');
    });
    await on.connect();
    await waitUntil('connected', () => on.state() === 'connected' && fake.subscribers > 0, 15_000);
    return messages;
  }

  async function offerFor(messages: InboundMessage[], send: () => void): Promise<MediaOffer> {
    const before = messages.length;
    send();
    await waitUntil('the message handed on', () => messages.length > before, 10_000);
    return messages.at(-1)!.media![0]!;
  }

  const open = (on: SignalAdapter, offer: MediaOffer, maxBytes = 50 * MB, signal = new AbortController().signal) => on.openMedia(offer, { signal, maxBytes });
  const photo = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256));

  it('hands a photo without text on as `[photo]` with its offer, and fetches its exact bytes with getAttachment', async () => {
    const signal = adapter();
    const messages = await connected(signal);
    let ids: string[] = [];
    const offer = await offerFor(messages, () => (ids = fake.userSays({ from: alice, text: '', attachments: [{ bytes: photo, mime: 'image/jpeg' }] }).attachmentIds));
    expect(messages[0]).toMatchObject({ text: '[photo]', source: { chatId: alice.uuid } });
    expect(offer).toEqual({ kind: 'image', source: `sg:${ids[0]}:${photo.length}:${alice.uuid}`, mime: 'image/jpeg', size: photo.length });
    const body = await open(signal, offer);
    expect(body.size).toBe(photo.length);
    expect(sha(await bytesOf(body))).toBe(sha(photo));
    expect(fake.requests.filter((request) => request.method === 'getAttachment').map((request) => request.params)).toEqual([{ id: ids[0], recipient: alice.uuid }]);
    expect(fake.downloads.map((download) => download.status)).toEqual(['served']);
  });

  it('fetches a file larger than the connection’s usual line (4 MiB) whole, under a limit that allows it', async () => {
    const signal = adapter();
    const messages = await connected(signal);
    const big = Buffer.alloc(5 * 1024 * 1024, 7);
    big.write('%PDF-1.7', 0);
    const offer = await offerFor(messages, () => fake.userSays({ from: alice, text: 'the contract', attachments: [{ bytes: big, mime: 'application/pdf', name: 'contract.pdf' }] }));
    expect(offer).toMatchObject({ kind: 'document', name: 'contract.pdf', size: big.length });
    expect(sha(await bytesOf(await open(signal, offer, 6 * MB)))).toBe(sha(big));
  });

  it('refuses a file declared over the limit without asking signal-cli, and one whose answer is over it', async () => {
    const signal = adapter();
    const messages = await connected(signal);
    let ids: string[] = [];
    const offer = await offerFor(messages, () => (ids = fake.userSays({ from: alice, text: '', attachments: [{ bytes: Buffer.alloc(5 * MB), mime: 'application/zip', name: 'big.zip' }] }).attachmentIds));
    const declared = await refusal(open(signal, offer, 2 * MB));
    expect([declared.permanent, declared.message]).toEqual([true, 'too large (5 MB; the limit is 2 MB)']);
    expect(fake.downloads).toEqual([]);
    // The declared size lied (or was absent): the answer's length gives it away, unread past the limit or undecoded.
    const undeclared = { ...offer, source: `sg:${ids[0]}::${alice.uuid}` };
    const answered = await refusal(open(signal, undeclared, 2 * MB));
    expect([answered.permanent, answered.message]).toEqual([true, "too large (signal-cli's answer was longer than a file of 2 MB, the limit, can be)"]);
    const justOver = await refusal(open(signal, undeclared, 5 * MB - 1));
    expect([justOver.permanent, justOver.message]).toEqual([true, 'too large (5 MB; the limit is 5 MB)']);
    // The connection reads on.
    expect((await bytesOf(await open(signal, undeclared, 5 * MB))).length).toBe(5 * MB);
  });

  it('refuses for good, in words, a file signal-cli does not have, and an id Homing would not send', async () => {
    const signal = adapter();
    const messages = await connected(signal);
    let ids: string[] = [];
    const offer = await offerFor(messages, () => (ids = fake.userSays({ from: alice, text: '', attachments: [{ bytes: photo, mime: 'image/png', name: 'a.png' }] }).attachmentIds));
    fake.forgetAttachment(ids[0]!);
    const gone = await refusal(open(signal, offer));
    expect([gone.permanent, gone.message]).toEqual([true, `the image is not in signal-cli's store (signal-cli: Could not find attachment with ID: ${ids[0]})`]);
    const hostile = await refusal(open(signal, { kind: 'image', source: `sg:../../config.json:1:${alice.uuid}` }));
    expect([hostile.permanent, hostile.message]).toEqual([true, 'the image has no signal-cli attachment id Homing can use']);
  });

  it('says a file cannot be fetched while not connected (temporary), and hangs while signal-cli holds its answer until stopped', async () => {
    const signal = adapter();
    const messages = await connected(signal);
    const offer = await offerFor(messages, () => fake.userSays({ from: alice, text: 'look', attachments: [{ bytes: photo, mime: 'image/jpeg' }] }));
    const release = fake.holdDownloads();
    const stop = new AbortController();
    const held = refusal(open(signal, offer, 50 * MB, stop.signal));
    await waitUntil('the download held', () => fake.downloads.length === 1, 5_000);
    stop.abort();
    expect(await held).toMatchObject({ permanent: false, message: 'the image could not be fetched from signal-cli: stopped' });
    const waiting = open(signal, offer);
    await waitUntil('the second download held', () => fake.downloads.length === 2, 5_000);
    release();
    expect(sha(await bytesOf(await waiting))).toBe(sha(photo));
    await signal.disconnect();
    const away = await refusal(open(signal, offer));
    expect([away.permanent, away.message]).toEqual([false, 'the image cannot be fetched now: Homing is not connected to the signal-cli daemon']);
  });

  it('offers a group file with the group as its place, and a restart offers what the journal kept', async () => {
    const group = fake.addGroup('Home', [alice]);
    const config = signalConfigSchema.parse({ daemon: fake.address, account: fake.account.number, allowFrom: [alice.number], groups: { [group.id]: {} } });
    const access = { isApproved: () => false, requestPairing: () => undefined, owedPairing: () => [], pairingTold: () => {} };
    const first = new SignalAdapter({ config, dataDir, access, reconnectDelayMs: () => 100 });
    adapters.push(first);
    const unsaved: InboundMessage[] = [];
    // The pipeline never says it saved the message: it stays in the journal.
    first.onEvent((event) => void (event.type === 'message' && unsaved.push(event.message)));
    await first.connect();
    await waitUntil('subscribed', () => fake.subscribers > 0, 15_000);
    fake.userSays({ from: alice, text: 'this one', group, mentionBot: true, attachments: [{ bytes: photo, mime: 'image/jpeg', name: 'x.jpg' }] });
    await waitUntil('handed on', () => unsaved.length === 1, 10_000);
    await first.disconnect();
    const second = new SignalAdapter({ config, dataDir, access, reconnectDelayMs: () => 100 });
    adapters.push(second);
    const again = await connected(second);
    await waitUntil('handed on again', () => again.length === 1, 10_000);
    expect(again[0]).toMatchObject({ text: 'this one', maybeSeen: true, media: unsaved[0]!.media });
    expect(again[0]!.media![0]!.source).toMatch(new RegExp(`:group:${group.id.replace(/[+/]/g, '\\$&')}$`));
    expect(sha(await bytesOf(await open(second, again[0]!.media![0]!)))).toBe(sha(photo));
    expect(fake.requests.filter((request) => request.method === 'getAttachment').at(-1)!.params).toMatchObject({ groupId: group.id });
  });
});

describe('openSignalMedia without the daemon', () => {
  const source = 'sg:a.jpg::+15550000002';
  const signal = new AbortController().signal;
  const answering = (answer: () => Promise<unknown>) => ({ isOpen: true, call: answer });

  it('bounds the answer it asks for by the limit, and refuses data that is not base64 or missing (temporary)', async () => {
    const asked: unknown[] = [];
    const connection = { isOpen: true, call: async (...args: unknown[]) => void asked.push(args) };
    await refusal(openSignalMedia({ kind: 'image', source }, { signal, maxBytes: 3_000 }, connection));
    expect(asked).toEqual([['getAttachment', { id: 'a.jpg', recipient: '+15550000002' }, 120_000, { maxAnswerBytes: answerLimit(3_000), signal }]]);
    expect(answerLimit(3_000)).toBe(4_000 + 1024);
    expect(await refusal(openSignalMedia({ kind: 'image', source }, { signal, maxBytes: MB }, answering(async () => ({ data: 'not base64!' }))))).toMatchObject({ permanent: false });
    expect(await refusal(openSignalMedia({ kind: 'image', source }, { signal, maxBytes: MB }, answering(async () => ({}))))).toMatchObject({ permanent: false, message: 'signal-cli answered without the data of the image' });
  });

  it('decodes exactly, padding included, and streams in pieces', async () => {
    for (const length of [0, 1, 2, 3, 200_000]) {
      const bytes = Buffer.from(Array.from({ length }, (_, i) => (i * 13) % 256));
      const body = await openSignalMedia({ kind: 'document', source }, { signal, maxBytes: MB }, answering(async () => ({ data: bytes.toString('base64') })));
      expect(body.size).toBe(length);
      expect(sha(await bytesOf(body))).toBe(sha(bytes));
    }
  });

  it('takes a read error in signal-cli as temporary, and a signal-cli without getAttachment as permanent', async () => {
    const { RpcError } = await import('./json-rpc-connection');
    const failing = (code: number, message: string) => answering(async () => Promise.reject(new RpcError(code, message, null)));
    expect(await refusal(openSignalMedia({ kind: 'voice', source }, { signal, maxBytes: MB }, failing(-32603, 'An error occurred reading attachment: a.jpg (UnexpectedErrorException)')))).toMatchObject({
      permanent: false,
      message: 'signal-cli could not read the voice message (An error occurred reading attachment: a.jpg (UnexpectedErrorException))',
    });
    expect(await refusal(openSignalMedia({ kind: 'voice', source }, { signal, maxBytes: MB }, failing(-32601, 'Method not implemented')))).toMatchObject({ permanent: true });
  });
});
