import Database from 'better-sqlite3';
import ircFramework from 'irc-framework';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DeliveryPage } from '../../src/shared/api';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import { textBudget, toProtocolLines } from '../../src/main/gateway/platforms/irc/lines';
import { chunksOf, type ObligationSql } from '../../src/main/gateway/ledger/rows';
import { splitReply } from '../../src/main/gateway/delivery/reply-parts';
import { longText } from '../fixtures/long-text.mjs';
import { connectIrcUser, type IrcUser } from '../support/irc-user';
import { startNgircd, type RunningNgircd } from '../support/ngircd';
import { waitUntil } from '../support/wait';
import { agentStarts, type CrashRow } from './suite';

const BOT = 'homing';
const CHANNEL = '#homing';

/**
 * IRC on a real ngircd, with the adapter's real defaults (4000-byte chunks, a
 * line every 400 ms after a burst of 4): the CLI has no test tuning, and the
 * pacing is what makes a kill between lines deterministic.
 */
export const ircCrashes: CrashRow = {
  platform: 'IRC',
  cases(suite) {
    let server: RunningNgircd;
    const users: IrcUser[] = [];

    beforeEach(async () => {
      server = await startNgircd();
      suite.use({ irc: { host: '127.0.0.1', port: server.port, tls: false, nick: BOT, channels: [CHANNEL], allow: ['alice'] } });
    });

    afterEach(async () => {
      for (const user of users.splice(0)) await user.quit();
      await server?.dispose();
    });

    async function user(nick: string, channels: string[] = []): Promise<IrcUser> {
      const connected = await connectIrcUser(server, nick, channels);
      users.push(connected);
      return connected;
    }

    it('answers an IRC direct message again after a crash during its agent turn; the reply reaches the user once', async () => {
      const text = 'are you still with me?';
      const [startedFile, goFile] = [suite.file('started'), suite.file('go')];
      suite.configure(['--started', startedFile, '--wait-for', goFile]);
      const alice = await user('alice', [CHANNEL]);
      const first = await suite.start();
      await waitUntil('the bot to join', () => alice.joins.some((join) => join.nick === BOT), 10_000);

      alice.client.say(BOT, text);
      await waitUntil('the agent to start its turn', () => agentStarts(startedFile).length === 1, 10_000);
      await suite.crash(first.gateway);
      await waitUntil('the killed bot to leave', () => alice.rawLines.some((line) => line.startsWith(`:${BOT}!`) && line.includes(' QUIT ')));
      writeFileSync(goFile, '');
      const second = await suite.start();

      await waitUntil('the reply at alice', () => alice.privmsgs.some((event) => event.nick === BOT), 15_000);
      await suite.whenDelivered(second.api, 8_000, 'the ledger to say delivered');
      await alice.roundTrip();
      expect(alice.privmsgs.filter((event) => event.nick === BOT).map((event) => [event.target, event.message])).toEqual([
        ['alice', `You said: ${text}`],
      ]);
      const page = await second.api.call<DeliveryPage>('listDeliveries', {});
      expect(page.deliveries).toHaveLength(1);
      expect(page.deliveries[0]).toMatchObject({ platform: 'irc', chatId: 'alice', state: 'delivered', attempts: 0 });
      expect(agentStarts(startedFile)).toHaveLength(2);
    });

    it('resumes a long IRC reply after a crash between its lines: nothing delivered is sent again, the chunk in flight once more, marked', async () => {
      const reply = longText(7_800); // 8 416 bytes: two full chunks and a short third
      suite.configure(['--chars', '7800']);
      // The chunks the pipeline records for IRC (4000 bytes, less the marker's room),
      // and the PRIVMSG lines each becomes.
      const chunks = splitReply(reply, { maxLength: 4000, unit: 'bytes' });
      expect(chunks.length).toBeGreaterThanOrEqual(3);
      const lines = (chunk: string) => toProtocolLines(chunk, textBudget(BOT, 'alice'));
      const [first0, first1] = [lines(chunks[0]!), lines(chunks[1]!)];

      // alice shares the channel with the bot, so she sees the killed connection's
      // QUIT: every line before it came from the first process, every one after from the second.
      const alice = await user('alice', [CHANNEL]);
      const first = await suite.start();
      await waitUntil('the bot to join', () => alice.joins.some((join) => join.nick === BOT), 10_000);
      alice.client.say(BOT, 'tell me a long story');

      // Kill in the middle of the second chunk: its first two lines are in.
      await waitUntil('two lines of the second chunk', () => botLines(alice.rawLines).length >= first0.length + 2, 20_000);
      await suite.crash(first.gateway);
      await waitUntil('the killed bot to leave', () => quitIndex(alice.rawLines) >= 0);
      const before = botLines(alice.rawLines.slice(0, quitIndex(alice.rawLines)));

      // What the dead process left in the ledger: chunk 0 delivered, chunk 1 in flight, the rest owed.
      const left = readLedger(suite.dataDir);
      expect(left.obligation).toMatchObject({ state: 'attempting', attempts: 0, chunks_delivered: 1 });
      expect(left.chunks.map((chunk) => chunk.text)).toEqual(chunks);
      expect(left.chunks.map((chunk) => chunk.state)).toEqual(['delivered', 'sending', ...chunks.slice(2).map(() => 'owed')]);
      // …and what alice got from it: all of chunk 0 and part of chunk 1, in order.
      expect(before.map((line) => line.text)).toEqual([...first0, ...first1].slice(0, before.length));
      expect(before.length).toBeGreaterThan(first0.length);
      expect(before.length).toBeLessThan(first0.length + first1.length);

      const second = await suite.start();
      await suite.whenDelivered(second.api, 30_000, 'the rest of the reply to be delivered');
      await alice.roundTrip();
      const after = botLines(alice.rawLines.slice(quitIndex(alice.rawLines)));

      // The second process took the nick back (the first one's QUIT came before it connected).
      expect(new Set(after.map((line) => line.nick))).toEqual(new Set([BOT]));
      // Exactly: the marker, chunk 1 again (the one in flight), then every chunk after it.
      // Chunk 0, recorded as delivered, is not sent again; no chunk is sent twice after the restart.
      expect(after.map((line) => line.text)).toEqual([RESEND_MARKER, ...chunks.slice(1).flatMap(lines)]);
      // Every line of the reply arrived: from the first process up to the kill, the rest from the second.
      const received = [...before.slice(0, first0.length), ...after.slice(1)].map((line) => line.text);
      expect(received).toEqual(chunks.flatMap(lines));
      expect(received.join(' ').replace(/\s+/g, ' ')).toBe(reply.replace(/\s+/g, ' '));

      const row = (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
      expect(row).toMatchObject({ state: 'delivered', attempts: 0, chunksDelivered: chunks.length, chunksTotal: chunks.length });
    }, 60_000);
  },
};

/** The bot's PRIVMSGs to alice in raw server lines, with the nick that sent each. */
function botLines(rawLines: readonly string[]): { nick: string; text: string }[] {
  return rawLines.flatMap((raw) => {
    const line = ircFramework.ircLineParser(raw);
    if (!line || line.command !== 'PRIVMSG' || !line.nick.startsWith(BOT) || line.params[0] !== 'alice') return [];
    return [{ nick: line.nick, text: line.params[1] ?? '' }];
  });
}

function quitIndex(rawLines: readonly string[]): number {
  return rawLines.findIndex((line) => line.startsWith(`:${BOT}!`) && line.includes(' QUIT '));
}

/** The ledger as a killed gateway left it, read without writing (no checkpoint, no recovery). */
function readLedger(dataDir: string) {
  const db = new Database(join(dataDir, 'homing.db'), { readonly: true, fileMustExist: true });
  try {
    // The reply being sent is in the outbox (delivered replies move to the history).
    const row = db.prepare('SELECT * FROM ledger_outbox').get() as ObligationSql;
    const obligation = { state: row.state, attempts: row.attempts, chunks_delivered: row.chunks_delivered };
    return { obligation, chunks: chunksOf(row) };
  } finally {
    db.close();
  }
}
