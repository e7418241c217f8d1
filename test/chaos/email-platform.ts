import { simpleParser } from 'mailparser';
import { startDovecot, type RunningDovecot } from '../support/dovecot';
import { rawMail } from '../support/mail';
import { headerOf, SmtpSink } from '../support/smtp-sink';
import type { BotLine } from './analyze';
import { isMidReply, outage, pollUntil, requestIn, sleep, type ChaosPlatform } from './platform';

const AGENT = { address: 'agent@test.local', password: 'agentpw' };
const GROUP_NAME = 'second thread';
/** Dovecot logs each login; after it the adapter opens the folder and saves its position within a moment. */
const READY_GRACE_MS = 1_500;

/**
 * The chaos run on email: a real dovecot holding the assistant's inbox, the
 * SMTP sink taking its replies, and people at `<name>@people.test` whose
 * requests arrive by IMAP APPEND (as a mail server's delivery would), in
 * order, one at a time. Each person writes in two threads: their "direct"
 * conversation and a second thread (what the run calls the group). A "server
 * restart" stops and starts dovecot; mail for the assistant waits meanwhile,
 * as it would in the sending server's queue.
 *
 * Mail stays in the folder until the assistant reads it, so every request
 * appended counts as handed to Homing.
 */
export async function startEmailPlatform(users: readonly string[], register: (dispose: () => Promise<void>) => void): Promise<ChaosPlatform> {
  const started: { dovecot?: RunningDovecot } = {};
  const sink = new SmtpSink({ logins: new Map([[AGENT.address, AGENT.password]]) });
  let stopped = false;
  register(async () => {
    stopped = true;
    await sink.stop();
    await started.dovecot?.dispose();
  });
  const server = (started.dovecot = await startDovecot([AGENT]));
  await sink.start();

  const addressOf = new Map(users.map((name) => [name, `${name}@people.test`]));
  const nameOf = new Map([...addressOf].map(([name, address]) => [address, name]));
  const conversationOf = (user: string, inGroup: boolean) => (inGroup ? `${user} (${GROUP_NAME})` : user);
  /** Per conversation, its root Message-ID once its first request was written. */
  const roots = new Map<string, string>();
  /** Thread root → conversation. */
  const byRoot = new Map<string, string>();
  const handedAt = new Map<string, number>();
  const handedOrder = new Map<string, number>();
  let lastMidReplyAt = 0;
  const streams = new Map<string, BotLine[]>();
  let sent = 0;

  // One delivery at a time, in order; while dovecot is down it waits and tries again.
  const queue: { id: string | undefined; address: string; raw: string }[] = [];
  let wake: (() => void) | undefined;
  const deliverLoop = async () => {
    while (!stopped) {
      const next = queue[0];
      if (!next) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      try {
        await server.deliver(AGENT.address, next.raw);
      } catch {
        await sleep(100);
        continue;
      }
      queue.shift();
      if (next.id && !handedAt.has(next.id)) {
        handedAt.set(next.id, Date.now());
        handedOrder.set(next.id, handedOrder.size);
      }
    }
  };
  void deliverLoop();

  // Parsed one after the other, so the streams keep the order the mail arrived in.
  let parsing = Promise.resolve();
  sink.onMessage((message) => {
    parsing = parsing.then(async () => {
      const parsed = await simpleParser(message.raw);
      const root = headerOf(message.raw, 'References')?.split(/\s+/)[0];
      const conversation = (root && byRoot.get(root)) ?? nameOf.get(message.to[0] ?? '') ?? 'unknown';
      const stream = streams.get(conversation) ?? [];
      streams.set(conversation, stream);
      for (const text of (parsed.text ?? '').split('\n')) {
        if (text === '') continue;
        stream.push({ at: message.at, text });
        if (isMidReply(text)) lastMidReplyAt = message.at;
      }
    });
  });

  return {
    platformsConfig: {
      email: {
        address: AGENT.address,
        imap: { host: '127.0.0.1', port: server.port, security: 'none' },
        smtp: { host: '127.0.0.1', port: sink.address.port, security: 'none' },
        passwordEnv: 'EMAIL_PASSWORD',
        allowFrom: [...addressOf.values()],
        pollIntervalSeconds: 5,
      },
    },
    env: { EMAIL_PASSWORD: AGENT.password },
    users,
    group: GROUP_NAME,
    conversationOf,
    async whenBotReady(timeoutMs) {
      const login = `user=<${AGENT.address}>`;
      await pollUntil(() => server.output().includes(login), timeoutMs, `the assistant did not log in to dovecot in ${timeoutMs / 1000} s`);
      await sleep(READY_GRACE_MS);
    },
    send(user, inGroup, text) {
      const address = addressOf.get(user)!;
      const conversation = conversationOf(user, inGroup);
      const n = ++sent;
      const messageId = `<chaos-${n}.${Date.now().toString(36)}@people.test>`;
      const root = roots.get(conversation);
      if (root === undefined) {
        roots.set(conversation, messageId);
        byRoot.set(messageId, conversation);
      }
      const raw = rawMail({
        from: address,
        to: AGENT.address,
        subject: inGroup ? `${user}'s other topic` : `${user}'s questions`,
        messageId,
        ...(root ? { inReplyTo: root, references: [root] } : {}),
        text,
      });
      queue.push({ id: requestIn(text), address, raw });
      wake?.();
      return true;
    },
    async restartServer(random) {
      await server.stop();
      await outage(random);
      await server.start();
    },
    lastMidReplyAt: () => lastMidReplyAt,
    streams() {
      const map = new Map<string, BotLine[]>();
      for (const user of users) for (const inGroup of [false, true]) map.set(conversationOf(user, inGroup), []);
      for (const [conversation, stream] of streams) map.set(conversation, [...(map.get(conversation) ?? []), ...stream]);
      return map;
    },
    handed() {
      return { handed: new Map(handedAt), handedOrder: new Map(handedOrder) };
    },
    observerGaps: () => 0,
    dispose: async () => {
      stopped = true;
      wake?.();
      await sink.stop();
      await server.dispose();
    },
  };
}
