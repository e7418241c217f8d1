import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryPage, SessionPage } from '../src/shared/api';
import { bodyOf, EmailWorld } from './support/email-world';
import { userTurns } from './support/api-socket';
import { rawMail } from './support/mail';
import { headerOf } from './support/smtp-sink';
import { waitUntil } from './support/wait';

/**
 * Email end to end: the real headless gateway (`bin/homing.js gateway`, built
 * by `npm run build`) reading a real dovecot over IMAP and answering through
 * the SMTP sink, which delivers mail for the assistants back into dovecot.
 */

const AGENT = { address: 'agent@test.local', password: 'agentpw' };
const OTHER = { address: 'other@test.local', password: 'otherpw' };
const ALICE = 'alice@example.org';

describe('the headless gateway on email (real dovecot, SMTP sink)', () => {
  let world: EmailWorld;

  beforeAll(async () => {
    world = await EmailWorld.start([AGENT, OTHER]);
  }, 30_000);

  afterAll(async () => {
    await world?.dispose();
  });

  afterEach(async () => {
    await world.stopGateways();
  });

  it('keeps one conversation over a thread of three messages, each reply threaded under the message it answers', async () => {
    const dir = world.dataDir(AGENT.address, { allowFrom: [ALICE] });
    const { api } = await world.start(dir, AGENT.address);
    const before = world.sink.to(ALICE).length;

    await world.dovecot.deliver(AGENT.address, rawMail({ from: `Alice <${ALICE}>`, to: AGENT.address, subject: 'Trip to Lyon', messageId: '<t1@example.org>', text: 'Which train should I take?' }));
    await waitUntil('the first reply', () => world.sink.to(ALICE).length === before + 1, 30_000);
    const first = world.sink.to(ALICE).at(-1)!;
    const firstId = headerOf(first.raw, 'Message-ID')!;

    await world.dovecot.deliver(
      AGENT.address,
      rawMail({ from: ALICE, to: AGENT.address, subject: 'Re: Trip to Lyon', messageId: '<t2@example.org>', inReplyTo: firstId, references: ['<t1@example.org>', firstId], text: 'And the way back?\n\nOn Monday, the assistant wrote:\n> You said: …' }),
    );
    await waitUntil('the second reply', () => world.sink.to(ALICE).length === before + 2, 30_000);
    const second = world.sink.to(ALICE).at(-1)!;
    const secondId = headerOf(second.raw, 'Message-ID')!;

    await world.dovecot.deliver(
      AGENT.address,
      rawMail({ from: ALICE, to: AGENT.address, subject: 'Re: Trip to Lyon', messageId: '<t3@example.org>', inReplyTo: secondId, references: ['<t1@example.org>', firstId, '<t2@example.org>', secondId], text: 'Thanks!' }),
    );
    await waitUntil('the third reply', () => world.sink.to(ALICE).length === before + 3, 30_000);
    const third = world.sink.to(ALICE).at(-1)!;

    const replies = [first, second, third];
    expect(replies.map((reply) => headerOf(reply.raw, 'In-Reply-To'))).toEqual(['<t1@example.org>', '<t2@example.org>', '<t3@example.org>']);
    expect(replies.map((reply) => headerOf(reply.raw, 'References')?.split(/\s+/)[0])).toEqual(['<t1@example.org>', '<t1@example.org>', '<t1@example.org>']);
    expect(replies.map((reply) => headerOf(reply.raw, 'Subject'))).toEqual(['Re: Trip to Lyon', 'Re: Trip to Lyon', 'Re: Trip to Lyon']);
    expect(replies.every((reply) => headerOf(reply.raw, 'Auto-Submitted') === 'auto-replied')).toBe(true);
    expect(new Set(replies.map((reply) => headerOf(reply.raw, 'Message-ID'))).size).toBe(3);
    expect(await bodyOf(first)).toContain('Which train should I take?');
    // The quoted previous message is not given to the agent again.
    expect(await bodyOf(second)).not.toContain('wrote:');

    const sessions = (await api.call<SessionPage>('listSessions', {})).sessions.filter((session) => session.platform === 'email');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.userMessageCount).toBe(3);
    const turns = await userTurns(api);
    expect(turns.map((text) => text.split('\n\n[')[0])).toEqual(['Which train should I take?', 'And the way back?', 'Thanks!']);
  }, 120_000);

  it('never answers automatic mail, lists, bounces, strangers or a From the server says is forged', async () => {
    const dir = world.dataDir(AGENT.address, { allowFrom: [ALICE], trustedAuthServId: 'mx.test.local' });
    const { api } = await world.start(dir, AGENT.address);
    const before = world.sink.to(ALICE).length;
    const strangerBefore = world.sink.to('mallory@example.net').length;
    const robot = [
      ['Auto-Submitted: auto-replied'],
      ['Auto-Submitted: auto-generated'],
      ['Precedence: bulk'],
      ['Precedence: list'],
      ['Precedence: junk'],
      ['List-Id: Team <team.example.org>'],
      ['List-Unsubscribe: <mailto:leave@example.org>'],
      ['Return-Path: <>'],
      ['Authentication-Results: mx.test.local; spf=fail smtp.mailfrom=example.org; dkim=none; dmarc=fail header.from=example.org'],
    ];
    for (const [index, headers] of robot.entries()) {
      await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: `<robot${index}@example.org>`, headers, text: `automatic ${index}` }));
    }
    await world.dovecot.deliver(AGENT.address, rawMail({ from: 'mallory@example.net', to: AGENT.address, messageId: '<m@example.net>', text: 'let me in' }));
    await world.dovecot.deliver(
      AGENT.address,
      rawMail({ from: ALICE, to: AGENT.address, messageId: '<person@example.org>', headers: ['Auto-Submitted: no', 'Authentication-Results: mx.test.local; spf=pass smtp.mailfrom=alice@example.org; dkim=pass header.d=example.org'], text: 'a person, verified' }),
    );
    await waitUntil('the one reply', () => world.sink.to(ALICE).length === before + 1, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(world.sink.to(ALICE).length, 'one reply, not more').toBe(before + 1);
    // The person's mail came last: everything before it was read and passed over.
    const reply = world.sink.to(ALICE).at(-1)!;
    expect(headerOf(reply.raw, 'In-Reply-To')).toBe('<person@example.org>');
    expect(await bodyOf(reply)).toContain('[Sender check: SPF pass (example.org), DKIM pass (example.org) — sender verified, says mx.test.local');
    expect(world.sink.to('mallory@example.net').length).toBe(strangerBefore);
    const turns = await userTurns(api);
    expect(turns).toHaveLength(1);
    expect(turns[0]).toContain('a person, verified');
  }, 120_000);

  it('with requireAuthenticated, believes only the trusted server\u2019s Authentication-Results: a sender\u2019s own header saying "verified" is not answered', async () => {
    const verified = (server: string) => `Authentication-Results: ${server}; spf=pass smtp.mailfrom=alice@example.org; dkim=pass header.d=example.org; dmarc=pass header.from=example.org`;
    const refusals = (gateway: { output(): string }) => gateway.output().split('the server did not verify the sender').length - 1;
    const before = world.sink.to(ALICE).length;

    // No trusted server configured (dovecot adds no header): the topmost header is the sender's own.
    const untrusted = await world.start(world.dataDir(AGENT.address, { allowFrom: [ALICE], requireAuthenticated: true }), AGENT.address);
    await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<forged-1@example.org>', headers: [verified('mx.test.local')], text: 'a forged verdict' }));
    await waitUntil('the forged mail read', () => refusals(untrusted.gateway) === 1 || world.sink.to(ALICE).length > before, 30_000);
    expect(world.sink.to(ALICE).length, 'the forged mail is not answered').toBe(before);
    expect(untrusted.gateway.output()).toContain('set email.trustedAuthServId');
    await world.stopGateways();

    // The receiving server's id configured: a header from any other id is not believed, its own is.
    const dir = world.dataDir(AGENT.address, { allowFrom: [ALICE], requireAuthenticated: true, trustedAuthServId: 'MX.Receiver.Test' });
    const trusted = await world.start(dir, AGENT.address);
    await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<forged-2@example.org>', headers: [verified('mx.test.local')], text: 'forged again' }));
    await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, messageId: '<real@example.org>', headers: [verified('mx.receiver.test'), verified('mx.test.local')], text: 'really verified' }));
    await waitUntil('the verified mail answered', () => world.sink.to(ALICE).length === before + 1, 30_000);
    expect(refusals(trusted.gateway)).toBe(1);
    const reply = world.sink.to(ALICE).at(-1)!;
    expect(headerOf(reply.raw, 'In-Reply-To')).toBe('<real@example.org>');
    expect(await bodyOf(reply)).toContain('sender verified, says mx.receiver.test');
  }, 120_000);

  it('two Homing addresses mailing each other stop after one reply', async () => {
    const agentDir = world.dataDir(AGENT.address, { allowFrom: [OTHER.address] });
    const otherDir = world.dataDir(OTHER.address, { allowFrom: [AGENT.address] });
    const agent = await world.start(agentDir, AGENT.address);
    const other = await world.start(otherDir, OTHER.address);
    const toAgent = () => world.sink.to(AGENT.address).length;
    const toOther = () => world.sink.to(OTHER.address).length;
    const [agentBefore, otherBefore] = [toAgent(), toOther()];

    // A person writes from the agent's address to the other assistant (no Auto-Submitted: a human mail).
    await world.dovecot.deliver(OTHER.address, rawMail({ from: AGENT.address, to: OTHER.address, subject: 'Hello robot', messageId: '<human@test.local>', text: 'hello from a person at agent@' }));
    await waitUntil('the other assistant answers once', () => toAgent() === agentBefore + 1, 30_000);
    // Its reply reached the agent's inbox; the agent reads it and passes it over (automatic).
    await waitUntil(
      'the agent has read the reply',
      async () => (await world.dovecot.messages(AGENT.address)).some((message) => message.source.includes('Auto-Submitted: auto-replied')) && agent.gateway.output().includes('not answering a message: automatic mail'),
      30_000,
    );
    // A third message after the reply would come within a turn; give it several.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(toAgent()).toBe(agentBefore + 1);
    expect(toOther()).toBe(otherBefore);
    expect(await userTurns(agent.api)).toEqual([]);
    expect(await userTurns(other.api)).toHaveLength(1);
  }, 120_000);

  it('retries a reply the SMTP server deferred (4xx), unmarked, and fails one it refused (5xx) for good, in its words', async () => {
    const dir = world.dataDir(AGENT.address, { allowFrom: [ALICE] });
    const { api } = await world.start(dir, AGENT.address);
    const before = world.sink.to(ALICE).length;
    let deferred = 0;
    world.sink.beforeAccept((message) => {
      if (message.raw.includes('please defer') && deferred++ === 0) return { code: 451, text: '4.7.1 greylisted, try again later' };
      if (message.raw.includes('please refuse')) return { code: 550, text: '5.1.1 mailbox unavailable' };
      return undefined;
    });
    try {
      await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: 'Defer', messageId: '<defer@example.org>', text: 'please defer' }));
      await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: 'Refuse', messageId: '<refuse@example.org>', text: 'please refuse' }));
      const delivered = () => world.sink.to(ALICE).slice(before).filter((message) => message.accepted);
      await waitUntil('the deferred reply delivered after a backoff', () => delivered().length === 1, 60_000);
      expect(deferred).toBe(2);
      expect(await bodyOf(delivered()[0]!)).not.toContain('resent after an interruption');
      const failed = (await api.call<DeliveryPage>('listDeliveries', { state: 'failed' })).deliveries;
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ nextAttemptAt: null });
      expect(failed[0]!.lastError).toContain('mailbox unavailable');
      expect(world.sink.to(ALICE).slice(before).filter((message) => message.raw.includes('please refuse'))).toHaveLength(1);
    } finally {
      world.sink.beforeAccept(undefined);
    }
  }, 120_000);

  it('reads the mail that came after an earlier gateway set out to read the folder and stopped before its first read was saved', async () => {
    const dir = world.dataDir(AGENT.address, { allowFrom: [ALICE] });
    const before = world.sink.to(ALICE).length;
    await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: 'Old', messageId: '<before-setout@example.org>', text: 'from before Homing set out' }));
    // INTERNALDATE counts whole seconds: the set-out time lies strictly between the two mails.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const setOutAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: 'New', messageId: '<after-setout@example.org>', text: 'sent after Homing set out' }));
    // What a gateway leaves when it is stopped between setting out and its first read: the time it set out, no position.
    const account = createHash('sha256').update(`127.0.0.1\n${AGENT.address}`).digest('hex').slice(0, 16);
    mkdirSync(join(dir, 'email'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'email', `account-${account}.json`), JSON.stringify({ v: 1, folders: {}, begunAt: { INBOX: setOutAt }, threads: {} }), { mode: 0o600 });

    await world.start(dir, AGENT.address);
    await waitUntil('the reply to the mail that came after the first gateway set out', () => world.sink.to(ALICE).slice(before).length >= 1, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const replies = world.sink.to(ALICE).slice(before);
    expect(replies).toHaveLength(1);
    expect(headerOf(replies[0]!.raw, 'In-Reply-To')).toBe('<after-setout@example.org>');
  }, 60_000);
});
