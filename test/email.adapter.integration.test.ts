import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MediaFetchError, type MediaBody } from '../src/main/gateway/media/media';
import type { AdapterEvent, InboundMessage, IntakeOutcome } from '../src/main/gateway/platforms/adapter';
import { emailConfigSchema } from '../src/main/gateway/platforms/email/config-schema';
import { EmailAdapter } from '../src/main/gateway/platforms/email/email-adapter';
import { startDovecot, type RunningDovecot } from './support/dovecot';
import { rawMail } from './support/mail';
import { headerOf, SmtpSink } from './support/smtp-sink';
import { waitUntil } from './support/wait';

/**
 * The email adapter on its own against a real dovecot (IMAP) and the
 * smtp-server sink, both on loopback: what it reads, what it ignores, what it
 * sends and how SMTP refusals come back.
 */

const AGENT = { address: 'agent@test.local', password: 'agentpw' };
const ALICE = 'alice@example.org';

describe('the email adapter against a real dovecot and an SMTP sink', () => {
  let dovecot: RunningDovecot;
  let sink: SmtpSink;
  let dataDir: string;
  const adapters: EmailAdapter[] = [];

  beforeAll(async () => {
    dovecot = await startDovecot([AGENT]);
    sink = new SmtpSink({ logins: new Map([[AGENT.address, AGENT.password]]) });
    await sink.start();
  }, 30_000);

  afterAll(async () => {
    await sink?.stop();
    await dovecot?.dispose();
  });

  afterEach(async () => {
    for (const adapter of adapters.splice(0)) await adapter.disconnect();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  function adapter(overrides: Record<string, unknown> = {}, password = AGENT.password): { adapter: EmailAdapter; messages: InboundMessage[]; states: AdapterEvent[]; outcome: { next: IntakeOutcome } } {
    dataDir ??= mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const config = emailConfigSchema.parse({
      address: AGENT.address,
      imap: { host: '127.0.0.1', port: dovecot.port, security: 'none' },
      smtp: { host: '127.0.0.1', port: sink.address.port, security: 'none' },
      allowFrom: [ALICE],
      pollIntervalSeconds: 30,
      ...overrides,
    });
    const created = new EmailAdapter({ config, password, dataDir, reconnectDelayMs: () => 200 });
    adapters.push(created);
    const messages: InboundMessage[] = [];
    const states: AdapterEvent[] = [];
    const outcome = { next: 'saved' as IntakeOutcome };
    created.onEvent((event) => {
      if (event.type === 'message') {
        messages.push(event.message);
        event.ack?.(outcome.next);
      } else states.push(event);
    });
    return { adapter: created, messages, states, outcome };
  }

  it('hands on new mail with its thread and sender, once, and ignores automatic mail and strangers', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<old@example.org>', text: 'mail from before Homing' }));
    const { adapter: email, messages } = adapter();
    await email.connect();
    await waitUntil('connected', () => email.state() === 'connected', 15_000);

    await dovecot.deliver(AGENT.address, rawMail({ from: `Alice <${ALICE}>`, to: AGENT.address, subject: 'Plans', messageId: '<m1@example.org>', text: 'Shall we meet?' }));
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<auto@example.org>', headers: ['Auto-Submitted: auto-replied'], text: 'I am away' }));
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<list@example.org>', headers: ['List-Id: <news.example.org>'], text: 'newsletter' }));
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<bounce@example.org>', headers: ['Return-Path: <>'], text: 'bounce' }));
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<bulk@example.org>', headers: ['Precedence: bulk'], text: 'bulk' }));
    await dovecot.deliver(AGENT.address, rawMail({ from: AGENT.address, to: AGENT.address, messageId: '<own@test.local>', text: 'my own copy' }));
    await dovecot.deliver(AGENT.address, rawMail({ from: 'mallory@example.net', to: AGENT.address, messageId: '<stranger@example.net>', text: 'hi' }));
    await dovecot.deliver(
      AGENT.address,
      rawMail({ from: ALICE, to: AGENT.address, subject: 'Re: Plans', messageId: '<m2@example.org>', inReplyTo: '<m1@example.org>', references: ['<m1@example.org>'], html: '<p>Yes, <b>Tuesday</b> at <a href="https://example.org/map">the café</a>.</p>', attachments: [{ name: 'agenda.pdf', type: 'application/pdf', content: '%PDF-1.4 test' }] }),
    );
    await waitUntil('two messages', () => messages.length >= 2, 15_000);
    // Whatever else was in the folder has been read by now (the last message is handed last).
    expect(messages.map((message) => message.source.messageId)).toEqual(['<m1@example.org>', '<m2@example.org>']);
    const [first, second] = messages as [InboundMessage, InboundMessage];
    expect(first.source).toMatchObject({ platform: 'email', chatId: ALICE, chatType: 'direct', senderId: ALICE, threadId: '<m1@example.org>', senderName: 'Alice' });
    expect(first.text).toContain('subject: Plans]');
    expect(first.text).toContain('Shall we meet?');
    expect(first.replyTo).toBe('<m1@example.org>');
    expect(second.source.threadId).toBe('<m1@example.org>');
    expect(second.text).toContain('Yes, Tuesday at the café [https://example.org/map].');
    expect(second.text).toContain('[Attachments: agenda.pdf (application/pdf');
    expect(second.media).toEqual([{ kind: 'document', source: expect.stringMatching(/^INBOX\/[1-9]\d*\/[1-9]\d*\/0$/), mime: 'application/pdf', name: 'agenda.pdf', size: 13 }]);
    expect(first.media).toBeUndefined();
    expect(second.messageRef).not.toBe(first.messageRef);
  }, 60_000);

  it('after a restart reads on from the saved position: nothing twice, nothing missed', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const one = adapter();
    await one.adapter.connect();
    await waitUntil('connected', () => one.adapter.state() === 'connected', 15_000);
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<r1@example.org>', text: 'one' }));
    await waitUntil('the first message', () => one.messages.length === 1, 15_000);
    await one.adapter.disconnect();
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<r2@example.org>', text: 'two, while Homing was away' }));

    const two = adapter();
    await two.adapter.connect();
    await waitUntil('the second message', () => two.messages.length === 1, 15_000);
    expect(two.messages[0]!.source.messageId).toBe('<r2@example.org>');
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<r3@example.org>', text: 'three' }));
    await waitUntil('the third message', () => two.messages.length === 2, 15_000);
    expect(two.messages.map((message) => message.source.messageId)).toEqual(['<r2@example.org>', '<r3@example.org>']);
  }, 60_000);

  it('gives a message back when the pipeline cannot save it, and hands it again', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const { adapter: email, messages, outcome } = adapter();
    await email.connect();
    await waitUntil('connected', () => email.state() === 'connected', 15_000);
    outcome.next = 'not-now';
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<again@example.org>', text: 'save me' }));
    await waitUntil('handed once', () => messages.length === 1, 15_000);
    outcome.next = 'saved';
    await waitUntil('handed again', () => messages.length === 2, 15_000);
    expect(messages.map((message) => message.source.messageId)).toEqual(['<again@example.org>', '<again@example.org>']);
  }, 60_000);

  it('sends one threaded, automatic-marked, quoted-printable email per reply, with a Message-ID from the key', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const { adapter: email, messages } = adapter({ name: 'Homing Assistant' });
    await email.connect();
    await waitUntil('connected', () => email.state() === 'connected', 15_000);
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: 'Re: Re: Quarterly numbers', messageId: '<q2@example.org>', inReplyTo: '<q1@example.org>', references: ['<q0@example.org>', '<q1@example.org>'], text: 'numbers?' }));
    await waitUntil('the message', () => messages.length === 1, 15_000);
    const message = messages[0]!;
    const longLine = 'ü'.repeat(3000);
    const text = `Here you go.\n\n${longLine}\n${'word '.repeat(2000)}`;
    const result = await email.send(text, { chatId: message.source.chatId, threadId: message.source.threadId ?? null, replyTo: message.replyTo ?? null, idempotencyKey: 'abc123def456abc123def456' });
    expect(result).toEqual({ ok: true, platformMessageId: '<homing.abc123def456abc123def456@test.local>' });
    const sent = sink.to(ALICE).at(-1)!;
    expect(sent.mailFrom).toBe(AGENT.address);
    for (const line of sent.raw.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(998);
    expect(headerOf(sent.raw, 'Message-ID')).toBe('<homing.abc123def456abc123def456@test.local>');
    expect(headerOf(sent.raw, 'In-Reply-To')).toBe('<q2@example.org>');
    expect(headerOf(sent.raw, 'References')).toBe('<q0@example.org> <q2@example.org>');
    expect(headerOf(sent.raw, 'Subject')).toBe('Re: Quarterly numbers');
    expect(headerOf(sent.raw, 'Auto-Submitted')).toBe('auto-replied');
    expect(headerOf(sent.raw, 'Content-Transfer-Encoding')).toBe('quoted-printable');
    const parsed = await simpleParser(sent.raw);
    expect(parsed.text).toBe(`${text}\n`);
    expect(parsed.from?.value[0]).toMatchObject({ name: 'Homing Assistant', address: AGENT.address });
  }, 60_000);

  it('reports SMTP refusals: 5xx for good, 4xx to retry, both surely not delivered', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const { adapter: email } = adapter();
    await email.connect();
    await waitUntil('connected', () => email.state() === 'connected', 15_000);
    const target = { chatId: ALICE, threadId: '<t@example.org>', replyTo: '<t@example.org>', idempotencyKey: 'k1' };
    const off = sink.beforeAccept(() => ({ code: 550, text: 'mailbox unavailable' }));
    expect(await email.send('hello', target)).toMatchObject({ ok: false, permanent: true, retryable: false, notDelivered: true });
    sink.beforeAccept(() => ({ code: 451, text: 'try again later' }));
    expect(await email.send('hello', target)).toMatchObject({ ok: false, permanent: false, retryable: true, notDelivered: true });
    off();
    sink.beforeAccept(undefined);
    expect(await email.send('hello', target)).toMatchObject({ ok: true });
  }, 60_000);

  it('says the login was refused (IMAP), and keeps the password out of its words', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const { adapter: email, states } = adapter({}, 'wrong-password-123');
    await email.connect();
    await waitUntil('auth-failed', () => email.state() === 'auth-failed', 15_000);
    const words = states.map((event) => (event.type === 'state' ? (event.error ?? '') : '')).join(' ');
    expect(words).toContain('refused the login');
    expect(words).not.toContain('wrong-password-123');
  }, 60_000);

  it('survives hostile mail: garbage, no sender, a huge header, a message over the size limit; and reads on', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const { adapter: email, messages } = adapter({ maxMessageBytes: 20_000 });
    await email.connect();
    await waitUntil('connected', () => email.state() === 'connected', 15_000);
    await dovecot.deliver(AGENT.address, Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x0d, 0x0a, 0x0d, 0x0a, 0x80, 0x81]));
    await dovecot.deliver(AGENT.address, 'Subject: no sender at all\r\nMessage-ID: <nosender@example.org>\r\n\r\nhello\r\n');
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<refs@example.org>', references: Array.from({ length: 5_000 }, (_, i) => `<r${i}@example.org>`), text: 'many references' }));
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: 'Big one', messageId: '<big@example.org>', text: 'x'.repeat(60_000) }));
    await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<after@example.org>', text: 'still reading?' }));
    await waitUntil('the last message', () => messages.some((message) => message.source.messageId === '<after@example.org>'), 20_000);
    expect(messages.map((message) => message.source.messageId)).toEqual(['<refs@example.org>', '<big@example.org>', '<after@example.org>']);
    expect(messages[0]!.source.threadId).toBe('<r0@example.org>');
    const big = messages[1]!;
    expect(big.text).toMatch(/more than this assistant reads; only its header was read/);
    expect(big.text).toContain('subject: Big one]');
    expect(email.state()).toBe('connected');
  }, 60_000);

  async function bytesOf(body: MediaBody): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of body.stream) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  }

  async function refusal(promise: Promise<unknown>): Promise<MediaFetchError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (!(error instanceof MediaFetchError)) throw new Error(`expected a MediaFetchError, got ${String(error)}`);
    return error;
  }

  it('opens an offered file again from the server, byte for byte, and refuses for good what is gone', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const { adapter: email, messages } = adapter();
    await email.connect();
    await waitUntil('connected', () => email.state() === 'connected', 15_000);
    const photo = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200_000, 9), Buffer.from([0xff, 0xd9])]);
    const uid = await dovecot.deliver(
      AGENT.address,
      rawMail({ from: ALICE, to: AGENT.address, messageId: '<photo@example.org>', text: 'a photo', attachments: [{ name: 'plant.jpg', type: 'image/jpeg', content: photo }] }),
    );
    await waitUntil('the message', () => messages.some((message) => message.source.messageId === '<photo@example.org>'), 15_000);
    const offer = messages.find((message) => message.source.messageId === '<photo@example.org>')!.media![0]!;
    expect(offer).toMatchObject({ kind: 'image', mime: 'image/jpeg', name: 'plant.jpg', size: photo.length });
    const [folder, uidValidity, offeredUid, index] = offer.source.split('/');
    expect([folder, Number(offeredUid), index]).toEqual(['INBOX', uid, '0']);
    const signal = new AbortController().signal;
    const open = (source: string, maxBytes = 10_000_000) => email.openMedia({ kind: 'image', source }, { signal, maxBytes });

    const body = await open(offer.source);
    expect(body.size).toBe(photo.length);
    expect((await bytesOf(body)).equals(photo)).toBe(true);
    // Read with BODY.PEEK from a folder opened read-only: still unread.
    expect((await dovecot.messages(AGENT.address)).find((message) => message.uid === uid)!.flags).not.toContain('\\Seen');

    const cases: [string, string | RegExp][] = [
      ['INBOX/1/2', 'no email locator'],
      [`INBOX/${Number(uidValidity) + 1}/${uid}/0`, 'the message is no longer on the server (its folder was renumbered)'],
      [`Nowhere/${uidValidity}/${uid}/0`, 'the message is no longer on the server (its folder is gone)'],
      [`INBOX/${uidValidity}/${uid + 1000}/0`, 'the message is no longer on the server'],
      [`INBOX/${uidValidity}/${uid}/1`, 'the attachment is no longer in the message'],
    ];
    for (const [source, words] of cases) {
      const error = await refusal(open(source));
      expect(error.message, source).toMatch(words);
      expect(error.permanent, source).toBe(true);
    }
    const tooLarge = await refusal(open(offer.source, 100_000));
    expect(tooLarge).toMatchObject({ permanent: true, message: 'too large (200 KB; the limit is 100 KB)' });
  }, 60_000);

  it('takes an unreachable server or a refused login while opening a file as worth another try, with the password kept out', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const signal = new AbortController().signal;
    const down = adapter({ imap: { host: '127.0.0.1', port: 1, security: 'none' } }, 'secret-password-42').adapter;
    const unreachable = await refusal(down.openMedia({ kind: 'image', source: 'INBOX/1/1/0' }, { signal, maxBytes: 1000 }));
    expect(unreachable.permanent).toBe(false);
    expect(unreachable.message).toMatch(/^the mail server could not hand over the message/);
    const refused = adapter({}, 'secret-password-42').adapter;
    const login = await refusal(refused.openMedia({ kind: 'image', source: 'INBOX/1/1/0' }, { signal, maxBytes: 1000 }));
    expect(login).toMatchObject({ permanent: false, message: 'the IMAP server refused the login' });
    for (const error of [unreachable, login]) expect(error.message).not.toContain('secret-password-42');
  }, 60_000);

  it('without IDLE polls the folder every pollIntervalSeconds', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const { adapter: email, messages } = adapter({ idle: false, pollIntervalSeconds: 1 });
    await email.connect();
    await waitUntil('connected', () => email.state() === 'connected', 15_000);
    for (const n of [1, 2]) {
      await dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: `<poll${n}@example.org>`, text: `poll ${n}` }));
      await waitUntil(`poll ${n} read`, () => messages.length === n, 15_000);
    }
    expect(messages.map((message) => message.source.messageId)).toEqual(['<poll1@example.org>', '<poll2@example.org>']);
  }, 60_000);

  it('with STARTTLS asked for, refuses servers that cannot do it instead of logging in in plain text', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homing-email-adapter-'));
    const { adapter: email, states } = adapter({
      imap: { host: '127.0.0.1', port: dovecot.port, security: 'starttls' },
      smtp: { host: '127.0.0.1', port: sink.address.port, security: 'starttls' },
    });
    const before = sink.received.length;
    await email.connect();
    await waitUntil('IMAP refused', () => states.some((event) => event.type === 'state' && event.state === 'degraded'), 15_000);
    expect(email.state()).not.toBe('connected');
    const sent = await email.send('hello', { chatId: ALICE, threadId: null, replyTo: null, idempotencyKey: 'tls1' });
    expect(sent).toMatchObject({ ok: false, retryable: true, notDelivered: true });
    expect(sink.received.length).toBe(before);
  }, 60_000);
});
