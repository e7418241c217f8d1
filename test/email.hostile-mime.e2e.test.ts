import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailWorld } from './support/email-world';
import { rawMail } from './support/mail';
import { samplePeakMemory } from './support/process-memory';
import { headerOf } from './support/smtp-sink';
import { waitUntil } from './support/wait';

/**
 * Hostile MIME end to end: a real dovecot holds mail built to hurt a parser,
 * and the real headless gateway (`bin/homing.js gateway`) reads it over IMAP.
 * Nothing may crash it or grow it without bound, and a person's ordinary mail
 * that comes after is still answered — once.
 */

const AGENT = { address: 'agent@test.local', password: 'agentpw' };
const ALICE = 'alice@example.org';
const RSS_BOUND_MB = 400;
const HOSTILE = 6;

function head(messageId: string, extra: string[] = []): string {
  return [`From: ${ALICE}`, `To: ${AGENT.address}`, `Subject: hostile`, `Message-ID: ${messageId}`, `Date: ${new Date().toUTCString()}`, 'MIME-Version: 1.0', ...extra].join('\r\n');
}

/** 300 multipart levels, each with its own boundary, the text at the bottom. */
function deepMultipart(): string {
  const depth = 300;
  let body = ['Content-Type: text/plain; charset=utf-8', '', 'at the bottom'].join('\r\n');
  for (let level = depth - 1; level >= 0; level--) {
    body = [`Content-Type: multipart/mixed; boundary="b${level}"`, '', `--b${level}`, body, `--b${level}--`, ''].join('\r\n');
  }
  return `${head('<deep@example.org>')}\r\n${body}`;
}

/** The same boundary opened 20 000 times, never closed. */
function unclosedParts(): string {
  const parts = Array.from({ length: 20_000 }, () => '--x\r\nContent-Type: text/plain\r\n\r\npart').join('\r\n');
  return `${head('<unclosed@example.org>', ['Content-Type: multipart/mixed; boundary="x"'])}\r\n\r\n${parts}`;
}

/** A 1 MB header line and 5 000 more header lines. */
function hugeHeaders(): string {
  const many = Array.from({ length: 5_000 }, (_, i) => `X-Filler-${i}: ${'y'.repeat(40)}`);
  return `${head('<headers@example.org>', [`X-Huge: ${'h'.repeat(1 << 20)}`, ...many, 'Content-Type: text/plain'])}\r\n\r\nbody under huge headers\r\n`;
}

/** Encodings that do not decode: base64 with garbage, quoted-printable with bad escapes, a charset nobody has. */
function brokenEncodings(): string {
  const parts = [
    ['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64', '', '!!!not*base64$$$\r\n====\r\nQUJD=====RE'].join('\r\n'),
    ['Content-Type: text/plain; charset=x-unknown-9999', 'Content-Transfer-Encoding: quoted-printable', '', 'bad =ZZ escapes =\r\n=4 and =\r'].join('\r\n'),
    ['Content-Type: text/html; charset="utf-8', 'Content-Transfer-Encoding: x-uuencode-ish', '', '<p>unclosed <b>html<script>alert(1)</script>'].join('\r\n'),
  ];
  return `${head('<encodings@example.org>', ['Content-Type: multipart/alternative; boundary="e"'])}\r\n\r\n--e\r\n${parts.join('\r\n--e\r\n')}\r\n--e--\r\n`;
}

/** NUL bytes, lone CRs and invalid UTF-8 in headers and body. */
function badBytes(): Buffer {
  const text = `${head('<bytes@example.org>', ['Content-Type: text/plain; charset=utf-8', 'X-Nul: a\u0000b'])}\r\n\r\nnul \u0000 here\rlone cr\r\n`;
  return Buffer.concat([Buffer.from(text, 'latin1'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x0d, 0x0a])]);
}

/** A 4 MB text body. */
function hugeBody(): string {
  return `${head('<big@example.org>', ['Content-Type: text/plain; charset=utf-8'])}\r\n\r\n${'a long line of text. '.repeat(200_000)}\r\n`;
}


describe.runIf(process.platform === 'linux')('the headless gateway reading hostile MIME from a real dovecot', () => {
  let world: EmailWorld;

  beforeAll(async () => {
    world = await EmailWorld.start([AGENT]);
  }, 30_000);

  afterAll(async () => {
    await world?.dispose();
  });

  it('survives deep and unclosed multiparts, huge headers and bodies, broken encodings and bad bytes, and still answers the next ordinary mail once', async () => {
    const dir = world.dataDir(AGENT.address, { allowFrom: [ALICE] });
    const { gateway, api } = await world.start(dir, AGENT.address);
    const memory = samplePeakMemory(gateway.child, 100);
    let peakMb = 0;
    const before = world.sink.to(ALICE).length;
    try {
      const hostile = [deepMultipart(), unclosedParts(), hugeHeaders(), brokenEncodings(), badBytes(), hugeBody()];
      expect(hostile).toHaveLength(HOSTILE);
      for (const raw of hostile) await world.dovecot.deliver(AGENT.address, raw);
      await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: 'Still there?', messageId: '<ordinary@example.org>', text: 'an ordinary question' }));
      await waitUntil(
        'the ordinary mail answered',
        () => world.sink.to(ALICE).slice(before).some((reply) => headerOf(reply.raw, 'In-Reply-To') === '<ordinary@example.org>'),
        90_000,
      );
      // Whatever the hostile mail became (answered, or skipped with a line in the log), it is settled: nothing is left half-read.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    } finally {
      peakMb = memory.stop();
    }
    expect(gateway.child.exitCode, gateway.output()).toBeNull();
    expect(await api.call('getStatus')).toMatchObject({ state: 'running' });
    const replies = world.sink.to(ALICE).slice(before);
    expect(replies.filter((reply) => headerOf(reply.raw, 'In-Reply-To') === '<ordinary@example.org>')).toHaveLength(1);
    // No message is answered twice, and each hostile one is either answered or skipped with a line saying so.
    const inReplyTo = replies.map((reply) => headerOf(reply.raw, 'In-Reply-To'));
    expect(new Set(inReplyTo).size).toBe(inReplyTo.length);
    const skipped = gateway.output().split('\n').filter((line) => line.includes('email: a message could not be read; skipped')).length;
    expect(inReplyTo.filter((id) => id !== '<ordinary@example.org>').length + skipped).toBe(HOSTILE);
    expect(peakMb).toBeLessThan(RSS_BOUND_MB);
    expect(gateway.output()).not.toMatch(/RangeError|Maximum call stack|FATAL|uncaught/i);
  }, 150_000);
});
