import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DeliveryPage } from '../../src/shared/api';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import { userTurns } from '../support/api-socket';
import { FakeMatrix } from '../support/fake-matrix';
import { waitUntil } from '../support/wait';
import type { CrashRow } from './suite';

/**
 * Matrix on the fake homeserver, killed (and the homeserver restarted) where its
 * durable intake and txnId sends must hold. Matrix deduplicates a resend by its
 * txnId, so every chunk must show exactly once and no "possible repeat" marker is
 * ever sent.
 */
export const matrixCrashes: CrashRow = {
  platform: 'Matrix',
  cases(suite) {
    let fake: FakeMatrix;
    let bot: string;
    let alice: string;
    let room: string;

    beforeEach(async () => {
      fake = new FakeMatrix();
      await fake.start();
      bot = fake.addUser('homing', { displayName: 'Homing' });
      alice = fake.addUser('alice', { displayName: 'Alice' });
      const token = fake.issueToken(bot, 'HOMINGDEV');
      room = fake.createRoom(alice, { invite: [bot], direct: true });
      suite.use({ matrix: { homeserver: fake.baseUrl, user: bot, accessTokenEnv: 'MATRIX_TOKEN', allowFrom: [alice], pollTimeoutSeconds: 2 } }, { MATRIX_TOKEN: token });
    });

    afterEach(() => fake.stop());

    const sends = () => fake.requests.filter((request) => request.method === 'PUT' && request.path.includes('/send/m.room.message/'));
    const txnOf = (path: string) => decodeURIComponent(path.split('/').at(-1)!);

    function longReply(): { file: string; paragraphs: string[] } {
      const paragraphs = Array.from({ length: 500 }, (_, i) => `Part ${i}: **bold ${i}** and some words to make it long enough to need chunks.`);
      const file = suite.replyFile(paragraphs);
      return { file, paragraphs };
    }

    /** The reply as the room shows it: every part once, in order, and no marker anywhere. */
    function expectExactlyOnce(paragraphs: readonly string[], chunksTotal: number): void {
      const shown = fake.postedBy(bot, room);
      expect(shown).toHaveLength(chunksTotal);
      expect(shown.some((message) => message.body.includes(RESEND_MARKER))).toBe(false);
      const parts = shown.flatMap((message) => [...message.body.matchAll(/Part (\d+): bold \1 and/g)].map((match) => Number(match[1])));
      expect(parts).toEqual(paragraphs.map((_, i) => i));
      // Every txnId went to the server with one text only: the resend was the same request.
      const bodies = new Map<string, Set<string>>();
      for (const request of sends()) {
        const txnId = txnOf(request.path);
        const text = (request.body as { body: string }).body;
        bodies.set(txnId, (bodies.get(txnId) ?? new Set()).add(text));
      }
      for (const [, texts] of bodies) expect(texts.size).toBe(1);
    }

    /** A long reply asked for, and the gateway killed once its second chunk is posted and the answer to that post never came; the reply's paragraphs. */
    async function killWithSecondChunkInFlight(): Promise<string[]> {
      const { file, paragraphs } = longReply();
      suite.configure(['--reply-file', file]);
      const first = await suite.start();
      await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
      let count = 0;
      // The second chunk is posted, but its answer never comes back.
      const stop = fake.fault((request) => (request.method === 'PUT' && request.path.includes('/send/m.room.message/') && ++count === 2 ? { kind: 'hang-after' } : undefined));
      fake.userSays(alice, room, 'long please');
      await waitUntil('the second chunk posted', () => fake.postedBy(bot, room).length === 2, 20_000);
      await suite.crash(first.gateway);
      stop();
      return paragraphs;
    }

    it('after a kill with a chunk on its way, resends it with the same txnId: every chunk shows exactly once, no marker', async () => {
      const paragraphs = await killWithSecondChunkInFlight();

      const second = await suite.start();
      await suite.whenDelivered(second.api, 30_000);
      const row = (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
      expect(row.chunksTotal).toBeGreaterThanOrEqual(3);
      expectExactlyOnce(paragraphs, row.chunksTotal);
      // The chunk in flight was sent twice, and the server answered the second with the first event.
      const inFlight = txnOf(sends()[1]!.path);
      expect(sends().filter((request) => txnOf(request.path) === inFlight)).toHaveLength(2);
      expect(row.attempts).toBe(0);
    });

    it('the same with the homeserver restarted while the reply is owed: still every chunk exactly once, no marker', async () => {
      const paragraphs = await killWithSecondChunkInFlight();
      // The homeserver goes away and comes back (its txnId table kept, as Synapse's event_txn_id is).
      await fake.restart(1_000);

      const second = await suite.start();
      await suite.whenDelivered(second.api, 30_000);
      const row = (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
      expectExactlyOnce(paragraphs, row.chunksTotal);
      expect(fake.restarts).toBe(1);
    });

    it('survives the homeserver dropping a chunk\'s answer and restarting mid-reply, with the gateway up: exactly once, no marker', async () => {
      const { file, paragraphs } = longReply();
      suite.configure(['--reply-file', file]);
      const { api } = await suite.start();
      await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
      let count = 0;
      const stop = fake.fault((request) => {
        if (!(request.method === 'PUT' && request.path.includes('/send/m.room.message/') && ++count === 2)) return undefined;
        // Posted, the connection dropped, then the server away for a while.
        setTimeout(() => void fake.restart(1_500), 0);
        return { kind: 'drop-after' };
      });
      fake.userSays(alice, room, 'long please');
      await suite.whenDelivered(api, 40_000);
      stop();
      const row = (await api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
      expectExactlyOnce(paragraphs, row.chunksTotal);
    });

    it('after a kill before the sync position was saved, takes a message handed again once: by event_id, else by the transcript', async () => {
      suite.configure([]);
      const first = await suite.start();
      await waitUntil('the bot in the room', () => fake.membership(bot, room) === 'join', 15_000);
      const said = fake.userSays(alice, room, 'once only');
      await waitUntil(
        'the reply delivered',
        async () => (await first.api.call<DeliveryPage>('listDeliveries', { filter: 'delivered' })).deliveries.length === 1,
        15_000,
      );
      await suite.crash(first.gateway);
      const stateFile = suite.file('matrix', readdirSync(suite.file('matrix')).find((name) => name.endsWith('.json'))!);
      const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { since: string; handled: string[]; inFlight: string | null };
      expect(state.handled).toContain(said.event_id);
      // As if the process had died before saving the position after the message: the server hands it again.
      writeFileSync(stateFile, JSON.stringify({ ...state, since: 's1' }));
      const second = await suite.start();
      await waitUntil('polling again', () => fake.isPolling(bot), 15_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(fake.postedBy(bot, room).map((message) => message.body)).toEqual(['You said: once only']);
      await suite.crash(second.gateway);

      // Narrower still: died after the transcript's fsync, before noting the event as taken.
      writeFileSync(stateFile, JSON.stringify({ ...state, since: 's1', handled: state.handled.filter((id) => id !== said.event_id), inFlight: said.event_id }));
      const third = await suite.start();
      await waitUntil('polling again', () => fake.isPolling(bot), 15_000);
      await waitUntil('the event noted as taken', () => (JSON.parse(readFileSync(stateFile, 'utf8')) as { handled: string[] }).handled.includes(said.event_id), 15_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(fake.postedBy(bot, room).map((message) => message.body)).toEqual(['You said: once only']);
      expect(await userTurns(third.api)).toEqual(['once only']);
    });
  },
};
