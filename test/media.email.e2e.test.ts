import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentWav } from '../src/main/gateway/media/transcribe';
import { userTurns } from './support/api-socket';
import { startDovecotRelay, type DovecotRelay } from './support/dovecot';
import { bodyOf, EmailWorld } from './support/email-world';
import { rawMail, type MailParts } from './support/mail';
import { headerOf, type SinkMessage } from './support/smtp-sink';
import { waitUntil } from './support/wait';

/**
 * Files by email end to end: the real headless gateway (`bin/homing.js
 * gateway`, built by `npm run build`) reads mail with attachments from a real
 * dovecot, and the reply agent (test/fixtures/reply-agent.mjs) says what it was
 * given — the message's text, with the lines Homing adds for its files, and a
 * `[file <kind> <mime> <bytes> sha256:<16 hex>]` line per file handed to it,
 * hashed from the file Homing fetched. The gateway reaches dovecot through a
 * relay that can hold new connections: the adapter fetches files on a
 * connection of its own, so holding new connections holds the downloads.
 */

const AGENT = { address: 'agent@test.local', password: 'agentpw' };
const ALICE = 'alice@example.org';
const NOTES = readFileSync(fileURLToPath(new URL('./fixtures/media/notes.txt', import.meta.url)), 'utf8');
const PDF = readFileSync(fileURLToPath(new URL('./fixtures/media/hello.pdf', import.meta.url)));
/** A speech "engine" that prints one transcript for any audio (config `speech`, type command). */
const SPEECH = fileURLToPath(new URL('./window-fixtures/speech-hello.mjs', import.meta.url));

/** A small JPEG-signed file (Homing checks the type by the bytes), different for every seed. */
function photo(seed: number): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(6_000, seed), Buffer.from(`seed ${seed}`), Buffer.from([0xff, 0xd9])]);
}

function fileLine(kind: string, mime: string, bytes: Buffer): string {
  return `[file ${kind} ${mime} ${bytes.length} sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}]`;
}

describe('the headless gateway handing mail attachments to the agent (real dovecot, SMTP sink)', () => {
  let world: EmailWorld;
  let relay: DovecotRelay;
  let sent = 0;

  beforeAll(async () => {
    world = await EmailWorld.start([AGENT]);
    relay = await startDovecotRelay(world.dovecot.port);
  }, 30_000);

  afterAll(async () => {
    await world?.dispose();
    await relay?.close();
  });

  afterEach(async () => {
    await world.stopGateways();
  });

  /** A data directory whose gateway reaches dovecot through the relay. */
  function dataDir(extra: Record<string, unknown> = {}): string {
    return world.dataDir(AGENT.address, { allowFrom: [ALICE], imap: { host: '127.0.0.1', port: relay.port, security: 'none' } }, [], extra);
  }

  /** Alice's mail with files; its Message-ID. */
  async function mailWith(text: string, attachments: MailParts['attachments'], extra: Partial<MailParts> = {}): Promise<{ messageId: string; uid: number }> {
    const messageId = `<media-${++sent}.${Date.now().toString(36)}@example.org>`;
    const uid = await world.dovecot.deliver(AGENT.address, rawMail({ from: ALICE, to: AGENT.address, subject: 'Files', messageId, text, attachments, ...extra }));
    return { messageId, uid };
  }

  const answersTo = (messageId: string): SinkMessage[] => world.sink.to(ALICE).filter((reply) => headerOf(reply.raw, 'In-Reply-To') === messageId);

  async function answerTo(messageId: string, timeoutMs = 30_000): Promise<string> {
    await waitUntil(`the answer to ${messageId}`, () => answersTo(messageId).length > 0, timeoutMs);
    return bodyOf(answersTo(messageId)[0]!);
  }

  it('hands a JPEG attachment to the agent as the bytes that were sent, and leaves the mail unread', async () => {
    await world.start(dataDir(), AGENT.address);
    const bytes = photo(1);
    const { messageId, uid } = await mailWith('what is this plant?', [{ name: 'plant.jpg', type: 'image/jpeg', content: bytes }]);
    const answer = await answerTo(messageId);
    expect(answer).toContain('You said: what is this plant?');
    expect(answer).toContain(fileLine('image', 'image/jpeg', bytes));
    // Both the intake and the download read the mail with BODY.PEEK: it is still unread for the person's mail program.
    const stored = (await world.dovecot.messages(AGENT.address)).find((message) => message.uid === uid)!;
    expect(stored.flags).not.toContain('\\Seen');
  }, 60_000);

  it('hands an inline image of an HTML mail (Content-ID) and up to ten files, naming the rest', async () => {
    await world.start(dataDir(), AGENT.address);
    const logo = photo(2);
    const files = Array.from({ length: 11 }, (_, i) => ({ name: `part-${i}.jpg`, type: 'image/jpeg', content: photo(10 + i) }));
    const { messageId } = await mailWith('twelve pictures', [{ name: 'logo.jpg', type: 'image/jpeg', content: logo, inlineCid: 'logo@example.org' }, ...files], {
      html: '<p>twelve pictures <img src="cid:logo@example.org"></p>',
    });
    const answer = await answerTo(messageId);
    expect(answer).toContain(fileLine('image', 'image/jpeg', logo));
    for (const file of files.slice(0, 9)) expect(answer).toContain(fileLine('image', 'image/jpeg', file.content));
    expect(answer).not.toContain(fileLine('image', 'image/jpeg', files[9]!.content));
    expect(answer).toContain('[More attachments, not opened (one mail hands over at most 10): part-9.jpg (image/jpeg');
    expect(answer.match(/^\[file /gm)).toHaveLength(10);
  }, 60_000);

  it('survives hostile attachments — 900 parts, absurd names, broken encodings — offering ten and answering once', async () => {
    const { gateway } = await world.start(dataDir(), AGENT.address);
    const messageId = `<hostile-files.${Date.now().toString(36)}@example.org>`;
    const part = (headers: string[], body: string) => ['--h', ...headers, '', body].join('\r\n');
    const parts = [
      part(['Content-Type: text/plain; charset=utf-8'], 'hostile files'),
      // A name of about 100 000 characters with control and bidi characters, RFC 2231 continuations that never end, an encoded word that does not decode.
      part(['Content-Type: application/pdf', `Content-Disposition: attachment; filename="${'\u202e\u0007x'.repeat(33_000)}.pdf"`, 'Content-Transfer-Encoding: base64'], '!!!not base64!!!'),
      part(['Content-Type: image/jpeg', ...Array.from({ length: 500 }, (_, i) => ` ; filename*${i}*=utf-8''%FF%FE%00`).map((line, i) => (i === 0 ? `Content-Disposition: attachment${line}` : line))], 'jpeg?'),
      part(['Content-Type: audio/ogg', 'Content-Disposition: attachment; filename="=?x-unknown?Q?=ZZ=?="', 'Content-Transfer-Encoding: quoted-printable'], 'bad =ZZ escapes'),
      part(['Content-Type: image/png', 'Content-Disposition: inline', 'Content-ID: <>'], ''),
      ...Array.from({ length: 900 }, (_, i) => part(['Content-Type: application/octet-stream', `Content-Disposition: attachment; filename="f${i}.bin"`], `file ${i}`)),
    ];
    const raw = [`From: ${ALICE}`, `To: ${AGENT.address}`, 'Subject: hostile files', `Message-ID: ${messageId}`, 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="h"', '', ...parts, '--h--', ''].join('\r\n');
    await world.dovecot.deliver(AGENT.address, raw);
    const answer = await answerTo(messageId, 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${gateway.output().slice(-4_000)}`);
    });
    expect(answer).toContain('You said: hostile files');
    // Ten offered, each fetched; the rest named in one line, cut at thirty. (Over 1 000 parts the parser refuses the mail: it is skipped with a line in the log, as before.)
    expect(answer.match(/^\[file /gm)).toHaveLength(10);
    expect(answer).toMatch(/\[More attachments, not opened \(one mail hands over at most 10\): .*, and \d+ more\]/);
    // Names are one visible line of at most 200 characters: no control or direction-changing characters.
    expect(answer.includes('\u0007') || answer.includes('\u202e')).toBe(false);
    expect(answer).toMatch(/\[document “(?:x ){99}x…”, 6 bytes/);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(answersTo(messageId)).toHaveLength(1);
    expect(gateway.child.exitCode).toBeNull();
    expect(gateway.output()).not.toMatch(/RangeError|Maximum call stack|FATAL|uncaught/i);
  }, 90_000);

  it('gives the agent the text of a text attachment', async () => {
    await world.start(dataDir(), AGENT.address);
    const { messageId } = await mailWith('my notes', [{ name: 'notes.txt', type: 'text/plain', content: NOTES }]);
    const answer = await answerTo(messageId);
    expect(answer).toContain(`[text of the document “notes.txt”]:\n${NOTES.trim()}`);
    expect(answer).toContain(fileLine('document', 'text/plain', Buffer.from(NOTES)));
  }, 60_000);

  it('gives the agent a PDF’s text and an audio file’s transcript', async () => {
    await world.start(dataDir({ speech: { type: 'command', command: process.execPath, args: [SPEECH, '{file}'] } }), AGENT.address);
    const wav = silentWav(0.5);
    const { messageId } = await mailWith('the report, and a voice memo', [
      { name: 'report.pdf', type: 'application/pdf', content: PDF },
      { name: 'memo.wav', type: 'audio/wav', content: wav },
    ]);
    const answer = await answerTo(messageId);
    expect(answer).toContain('[text of the document “report.pdf”]:');
    expect(answer).toContain('The quick brown fox jumps over the lazy dog.');
    expect(answer).toContain('[transcript of the audio “memo.wav”]: hello from the walk');
    expect(answer).toContain(fileLine('audio', 'audio/wav', wav));
  }, 60_000);

  it('tells the agent a file over media.maxFileMB is too large, and still answers the text', async () => {
    await world.start(dataDir({ media: { maxFileMB: 1 } }), AGENT.address);
    const big = Buffer.alloc(2_000_000, 7);
    const { messageId } = await mailWith('a big one', [{ name: 'big.bin', type: 'application/octet-stream', content: big }]);
    const answer = await answerTo(messageId);
    expect(answer).toContain('You said: a big one');
    expect(answer).toMatch(/\[document “big\.bin”: could not be fetched — too large \(2 MB; the limit is 1 MB\)\]/);
    expect(answer).not.toContain('[file ');
  }, 60_000);

  it('tells the agent a file whose mail was deleted before the download is no longer on the server', async () => {
    const { gateway, api } = await world.start(dataDir(), AGENT.address);
    const release = relay.holdNewConnections();
    let messageId: string;
    try {
      const mail = await mailWith('deleted before the download', [{ name: 'plant.jpg', type: 'image/jpeg', content: photo(3) }]);
      messageId = mail.messageId;
      await waitUntil('the message saved', async () => (await userTurns(api)).some((text) => text.includes('deleted before the download')), 20_000);
      await world.dovecot.remove(AGENT.address, mail.uid);
    } finally {
      release();
    }
    const answer = await answerTo(messageId, 60_000);
    expect(answer).toMatch(/\[image “plant\.jpg”: could not be fetched — the message is no longer on the server\]/);
    expect(answer).not.toContain('[file ');
    expect(gateway.output()).toContain('a file of a message could not be fetched');
    expect(gateway.output()).not.toContain(AGENT.password);
  }, 90_000);

  it('answers a file whose message was saved but not fetched when it was killed, once, with the right bytes', async () => {
    const dir = dataDir();
    const first = await world.start(dir, AGENT.address);
    const bytes = photo(4);
    const release = relay.holdNewConnections();
    let messageId: string;
    try {
      ({ messageId } = await mailWith('saved, not fetched, then killed', [{ name: 'plant.jpg', type: 'image/jpeg', content: bytes }]));
      await waitUntil('the message saved', async () => (await userTurns(first.api)).some((text) => text.includes('saved, not fetched, then killed')), 20_000);
      // Saved, and its download held: nothing answered yet.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(answersTo(messageId)).toHaveLength(0);
      await world.kill(first.gateway);
    } finally {
      release();
    }
    await world.start(dir, AGENT.address);
    const answer = await answerTo(messageId, 60_000);
    expect(answer).toContain(fileLine('image', 'image/jpeg', bytes));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(answersTo(messageId)).toHaveLength(1);
  }, 90_000);
});
