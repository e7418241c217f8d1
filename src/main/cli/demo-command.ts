import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Clock } from '../gateway/clock';
import { openDatabase, type Db } from '../gateway/db/database';
import { homingMigrations } from '../gateway/db/migrations';
import { computeObligationId, Ledger } from '../gateway/ledger';
import { loadOrCreateInstallSecret } from '../gateway/session/install-secret';
import { createPseudonymiser } from '../gateway/session/pseudonyms';
import { SessionStore } from '../gateway/session/store';
import { parseCommandArgs, UsageError, type Command } from './command';
import { DEMO_CONVERSATIONS, type DemoExchange, type DemoFate } from './demo-data';

/** Left in a demo directory: only such a directory may be emptied and filled again. */
export const DEMO_MARKER = '.homing-demo';

const USAGE = `Usage: homing demo --data-dir DIR [--irc-port N] [--owed N]

  Fills a throwaway data directory with conversations on the local chat and
  IRC, and replies in every delivery state (owed, sending, failed, given up,
  discarded, delivered), so the window can be seen full:

    homing demo --data-dir /tmp/homing-demo
    npx homing gateway --data-dir /tmp/homing-demo

  DIR must be empty, missing, or a previous demo (which is replaced).
  IRC points at 127.0.0.1, so its card shows a real state (usually: nothing
  answers there, and the IRC replies stay owed).

  --irc-port N   the IRC port in config.json (default 6667)
  --owed N       also add N owed IRC replies, to try the list at scale`;

/** A clock the demo sets to each exchange's time, so ages and "next retry" read naturally. */
class DemoClock implements Clock {
  constructor(public time: number) {}
  now(): number {
    return this.time;
  }
  monotonic(): number {
    return this.time;
  }
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'fill a throwaway data directory with realistic conversations and deliveries',
  usage: USAGE,
  async run(args, context) {
    const { values } = parseCommandArgs('demo', args, {
      'data-dir': { type: 'string' },
      'irc-port': { type: 'string' },
      owed: { type: 'string' },
    });
    // Never the default data directory: a demo must not mix with real conversations.
    if (!values['data-dir']) throw new UsageError('demo: --data-dir DIR is required (a throwaway directory)');
    const ircPort = parseCount('--irc-port', values['irc-port'], 6667, 1, 65535);
    const extraOwed = parseCount('--owed', values.owed, 0, 0, 1_000_000);
    const dataDir = resolve(values['data-dir']);
    prepareDirectory(dataDir);
    const counts = fillDemo(dataDir, { ircPort, extraOwed, now: Date.now() });
    context.stdout(`Demo data in ${dataDir}: ${counts.conversations} conversations, ${counts.deliveries} replies in the ledger.`);
    context.stdout(`See it: npx homing gateway --data-dir ${dataDir}`);
    return 0;
  },
};

function parseCount(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`demo: ${flag} must be a whole number from ${min} to ${max}, not "${value}"`);
  }
  return Number(value);
}

function prepareDirectory(dataDir: string): void {
  if (!existsSync(dataDir)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } else {
    const entries = readdirSync(dataDir);
    if (entries.length > 0 && !entries.includes(DEMO_MARKER)) {
      throw new Error(`${dataDir} is not empty and is not a previous demo: choose an empty or new directory (nothing was changed)`);
    }
    for (const entry of entries) rmSync(join(dataDir, entry), { recursive: true, force: true });
  }
  writeFileSync(join(dataDir, DEMO_MARKER), 'Made by `homing demo`: throwaway data, replaced by the next demo.\n');
}

export function fillDemo(dataDir: string, options: { ircPort: number; extraOwed: number; now: number }): { conversations: number; deliveries: number } {
  const config = {
    platforms: {
      irc: { host: '127.0.0.1', port: options.ircPort, tls: false, nick: 'homing', channels: ['#homing', '#homelab'], allow: ['alice', 'bob', 'carol'] },
    },
  };
  writeFileSync(join(dataDir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);

  const db = openDatabase(join(dataDir, 'homing.db'), { migrations: homingMigrations });
  const clock = new DemoClock(options.now);
  try {
    const store = new SessionStore({ db, dataDir, clock, pseudonyms: createPseudonymiser(loadOrCreateInstallSecret(dataDir)) });
    // A stale cutoff is judged on the awake clock, which sweeps advance; a long
    // credit lets the demo age one reply past the cutoff in two sweeps.
    const ledger = new Ledger({ db, clock, policy: { maxCreditMs: 48 * 3_600_000 } });
    ledger.register();
    // Oldest first across conversations, as they would have happened.
    const timeline = DEMO_CONVERSATIONS.flatMap((conversation) =>
      conversation.exchanges.map((exchange) => ({ source: conversation.source, exchange })),
    ).sort((a, b) => b.exchange.minutesAgo - a.exchange.minutesAgo);
    let deliveries = 0;
    for (const [n, { source, exchange }] of timeline.entries()) {
      clock.time = options.now - exchange.minutesAgo * 60_000;
      const { sessionId, sessionKey } = store.resolve(source);
      const messageRef = `demo-${n}`;
      store.appendUserTurn(sessionId, { source: { ...source, messageId: messageRef }, text: exchange.ask, messageRef });
      clock.time += 4_000;
      const obligationId = computeObligationId(sessionKey, messageRef, exchange.answer);
      const chunks = exchange.answer.split(/\n\n/);
      ledger.recordObligation({
        obligationId,
        sessionKey,
        platform: source.platform,
        chatId: source.chatId,
        threadId: null,
        replyTo: messageRef,
        content: exchange.answer,
        chunks,
      });
      store.appendAssistantTurn(sessionId, { obligationId, text: exchange.answer, replyTo: messageRef });
      clock.time += 1_000;
      applyFate(ledger, clock, obligationId, chunks.length, exchange, options.now);
      deliveries += 1;
    }
    deliveries += addOwed(db, store, ledger, clock, options);
    // Stopped, so the gateway takes over what this process "owned" at once.
    ledger.stop();
    return { conversations: DEMO_CONVERSATIONS.length, deliveries };
  } finally {
    db.close();
  }
}

function applyFate(ledger: Ledger, clock: DemoClock, id: string, chunks: number, exchange: DemoExchange, now: number): void {
  const fate: DemoFate = exchange.fate;
  // Each fate goes through the ledger's own verbs, so the demo holds only states the gateway can reach.
  const claim = () => {
    ledger.letGo(id); // the demo's previous step with this row is done
    const claimed = ledger.markAttempting(id);
    if (!claimed.ok) throw new Error(`demo: cannot claim ${id}: ${claimed.reason}`);
    return claimed.claim.receipt;
  };
  switch (fate.kind) {
    case 'pending':
      return;
    case 'delivered': {
      const receipt = claim();
      for (let index = 0; index < chunks - 1; index++) ledger.markChunkDelivered(receipt, index, `demo-${id}-${index}`);
      ledger.markDelivered(receipt, { index: chunks - 1, platformMessageId: `demo-${id}-${chunks - 1}` });
      return;
    }
    case 'attempting': {
      const receipt = claim();
      for (let index = 0; index < fate.chunksDelivered; index++) ledger.markChunkDelivered(receipt, index, `demo-${id}-${index}`);
      return;
    }
    case 'failed':
      // The platform's retry-after, counted from the demo's "now".
      ledger.markFailed(claim(), { error: fate.error, retryable: true, permanent: false, retryAfterMs: now - clock.time + fate.retryAfterMs });
      return;
    case 'failed-permanently':
      ledger.markFailed(claim(), { error: fate.error, retryable: false, permanent: true });
      return;
    case 'abandoned-cap':
      for (let attempt = 0; attempt < ledger.policy.maxAttempts; attempt++) {
        ledger.markFailed(claim(), { error: fate.error, retryable: true, permanent: false });
        clock.time += 60_000 * 2 ** attempt;
      }
      return;
    case 'abandoned-stale': {
      // Two sweeps a day apart: the reply was owed, while a gateway ran, past the cutoff.
      ledger.sweepRecoverable({ now: clock.time, deliverablePlatforms: [] });
      ledger.sweepRecoverable({ now: clock.time + ledger.policy.staleAfterMs + 60_000, deliverablePlatforms: [] });
      return;
    }
    case 'discarded':
      ledger.discardDelivery(id);
      return;
  }
}

/** `--owed N`: one more IRC conversation with N unanswered-for replies, recorded through the ledger. */
function addOwed(db: Db, store: SessionStore, ledger: Ledger, clock: DemoClock, options: { extraOwed: number; now: number }): number {
  if (options.extraOwed === 0) return 0;
  const source = { platform: 'irc', chatId: '#busy', chatType: 'group' as const, senderId: 'dave', senderName: 'dave', chatName: '#busy' };
  clock.time = options.now - options.extraOwed * 1_000;
  const { sessionId, sessionKey } = store.resolve(source);
  store.appendUserTurn(sessionId, { source, text: 'homing: answer everyone, please', messageRef: 'busy-all' });
  let last = '';
  // One transaction: ten thousand fsynced commits would take minutes.
  db.transaction(() => {
    for (let n = 0; n < options.extraOwed; n++) {
      clock.time += 1_000;
      const content = `Reply number ${n + 1} to #busy: still owed, because IRC is not connected.`;
      last = computeObligationId(sessionKey, `busy-${n}`, content);
      ledger.recordObligation({ obligationId: last, sessionKey, platform: 'irc', chatId: '#busy', threadId: null, replyTo: null, content, chunks: [content] });
    }
  })();
  // The transcript shows the last reply (the user turn is answered, so nothing looks interrupted).
  store.appendAssistantTurn(sessionId, { obligationId: last, text: `Reply number ${options.extraOwed} to #busy: still owed, because IRC is not connected.` });
  return options.extraOwed;
}
