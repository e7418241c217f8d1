import { Gateway } from '../src/main/gateway/gateway';
import { silentLogger } from '../src/main/gateway/logger';
import type { InboundMessage } from '../src/main/gateway/platforms/adapter';
import type { Bench } from './harness';

const TURNS = 300;

/**
 * Messages through the whole pipeline (session, built-in agent, transcript,
 * ledger, local delivery) spread over 1, 10 and 100 conversations, with the
 * ledger durable in homing.db (fsync per commit) versus in memory. Transcripts
 * are fsynced in both, so the ratio is the cost of the ledger's durability.
 */
const bench: Bench = {
  name: `Pipeline throughput, built-in agent, ${TURNS} messages per run`,
  async run(context) {
    for (const conversations of [1, 10, 100]) {
      const durable = await measure(context.tmpDir(), conversations, undefined);
      const memory = await measure(context.tmpDir(), conversations, ':memory:');
      context.report(`${conversations} conversation${conversations === 1 ? '' : 's'}`, {
        ledger_durable_turns_per_s: durable,
        ledger_in_memory_turns_per_s: memory,
        ratio: durable / memory,
      });
    }
  },
};

async function measure(dataDir: string, conversations: number, databaseFile: string | undefined): Promise<number> {
  const gateway = Gateway.start({
    dataDir,
    mode: 'headless',
    version: 'bench',
    logger: silentLogger,
    detectSleep: false,
    detectOllama: false,
    ...(databaseFile ? { databaseFile } : {}),
  });
  await gateway.ready;
  const message = (i: number): InboundMessage => {
    const peer = i % conversations;
    return {
      source: { platform: 'local', chatId: `bench-${peer}`, chatType: 'direct', senderId: `person-${peer}`, senderName: 'Bench' },
      text: `message ${i}`,
      messageRef: `bench-${i}`,
    };
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: TURNS }, (_, i) => gateway.pipeline.handle(message(i))));
  const seconds = (performance.now() - start) / 1000;
  const owed = gateway.deliveries.ledger.owedCount();
  await gateway.stop();
  if (owed !== 0) throw new Error(`${owed} replies still owed after the run`);
  return TURNS / seconds;
}

export default bench;
