import { writeFileSync } from 'node:fs';
import { beforeEach, expect, it } from 'vitest';
import type { DeliveryPage, SessionPage, TranscriptPage } from '../../src/shared/api';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import type { ApiSocket } from '../support/api-socket';
import { waitUntil } from '../support/wait';
import type { XmppRelay } from '../support/xmpp-relay';
import type { XmppUser } from '../support/xmpp-user';
import { useXmppWorld, XMPP_PASSWORDS } from '../support/xmpp-world';
import type { CrashRow } from './suite';


/**
 * XMPP on a real prosody, through a relay that can hold back what the server
 * says to the gateway, killed while a chunk is on its way or a message is saved
 * but not yet acknowledged.
 */
export const xmppCrashes: CrashRow = {
  platform: 'XMPP',
  cases(suite) {
    const world = useXmppWorld({ hibernationSeconds: 5 });
    let relay: XmppRelay;
    let alice: XmppUser;

    beforeEach(() => {
      ({ relay, alice } = world);
      suite.use(
        {
          xmpp: {
            jid: 'homing@localhost',
            host: '127.0.0.1',
            port: relay.port,
            security: 'none',
            passwordEnv: 'XMPP_PASSWORD',
            allowFrom: ['alice@localhost'],
            maxMessageBytes: 1_000,
          },
        },
        { XMPP_PASSWORD: XMPP_PASSWORDS.homing },
      );
    });

    const online = (api: ApiSocket) =>
      waitUntil('the gateway logged in', async () => (await api.call<{ name: string; state: string }[]>('listPlatforms')).some((p) => p.name === 'xmpp' && p.state === 'connected'), 20_000);

    it('resumes a reply killed mid-chunk after restart: earlier chunks not resent, the chunk in flight marked with the same origin-id', async () => {
      const paragraphs = Array.from({ length: 40 }, (_, i) => `Part ${i}: some words to make the reply long enough to need several messages.`);
      const file = suite.replyFile(paragraphs);
      suite.configure(['--reply-file', file]);
      const first = await suite.start();
      await online(first.api);
      // Once the second chunk is written, the server's acknowledgement of it never reaches the gateway.
      relay.onSent = (body) => {
        if (relay.sent.filter((entry) => entry.body.startsWith('Part ')).length === 2 && body.body.startsWith('Part ')) relay.hold();
      };
      await alice.say('homing@localhost', 'long please');
      await waitUntil('the second chunk delivered to alice', () => alice.bodiesFrom('homing@localhost').length === 2, 20_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(alice.bodiesFrom('homing@localhost'), 'no third chunk without the second one confirmed').toHaveLength(2);
      await suite.crash(first.gateway);
      relay.onSent = undefined;
      relay.release();

      const second = await suite.start();
      await suite.whenDelivered(second.api, 30_000);
      const row = (await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries[0]!;
      await waitUntil('every chunk at alice', () => alice.bodiesFrom('homing@localhost').length === row.chunksTotal + 1, 10_000);
      const sent = alice.bodiesFrom('homing@localhost');
      expect(row.chunksTotal).toBeGreaterThanOrEqual(4);
      expect(sent[0]!.body!.startsWith(RESEND_MARKER)).toBe(false);
      expect(sent[1]!.body!.startsWith(RESEND_MARKER)).toBe(false);
      expect(sent[2]!.body).toBe(`${RESEND_MARKER}\n${sent[1]!.body}`);
      // The same origin-id: a client can tell it is the same message.
      expect(sent[2]!.originId).toBe(sent[1]!.originId);
      expect(new Set(sent.map((message) => message.originId)).size).toBe(row.chunksTotal);
      expect(sent.slice(3).every((message) => !message.body!.startsWith(RESEND_MARKER))).toBe(true);
      const shown = [sent[0]!, ...sent.slice(2)].map((message) => message.body!.replace(`${RESEND_MARKER}\n`, '')).join('\n\n');
      expect([...shown.matchAll(/Part (\d+): some words/g)].map((match) => Number(match[1]))).toEqual(paragraphs.map((_, i) => i));
    });

    it('answers a message saved just before the kill after the restart, once', async () => {
      const go = suite.file('go');
      suite.configure(['--wait-for', go]);
      const first = await suite.start();
      await online(first.api);
      await alice.say('homing@localhost', 'saved, then killed');
      await waitUntil('the message saved', async () => (await first.api.call<{ sessions: unknown[] }>('listSessions', {})).sessions.length === 1, 15_000);
      await suite.crash(first.gateway);
      writeFileSync(go, '');
      const second = await suite.start();
      await waitUntil('the reply', () => alice.bodiesFrom('homing@localhost').length === 1, 30_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // The server handed it again (the kill came before our acknowledgement of it): recognised by its id, not taken twice.
      expect(relay.handed.filter((entry) => entry.body === 'saved, then killed').length).toBeGreaterThanOrEqual(1);
      expect(alice.bodiesFrom('homing@localhost').map((message) => message.body)).toEqual(['You said: saved, then killed']);
      expect((await second.api.call<DeliveryPage>('listDeliveries', {})).deliveries).toHaveLength(1);
      const [session] = (await second.api.call<SessionPage>('listSessions', {})).sessions;
      const turns = (await second.api.call<TranscriptPage>('getTranscript', { sessionId: session!.sessionId })).messages.filter((message) => message.role === 'user');
      expect(turns.map((message) => message.text)).toEqual(['saved, then killed']);
    });
  },
};
