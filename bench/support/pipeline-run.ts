import { Gateway } from '../../src/main/gateway/gateway';
import { silentLogger } from '../../src/main/gateway/logger';
import type { InboundMessage } from '../../src/main/gateway/platforms/adapter';
import { countWalFrames, type WalCount } from './wal-frames';

/**
 * Runs `turns` messages through a real gateway's pipeline (session, built-in
 * agent, transcript, ledger, local delivery), spread over `conversations`
 * conversations, and returns turns per second. `databaseFile` ':memory:' keeps
 * the ledger and the session index in memory (transcripts stay on disk).
 */
export async function pipelineTurnsPerSecond(dataDir: string, conversations: number, turns: number, databaseFile?: string): Promise<number> {
  const gateway = await startGateway(dataDir, databaseFile);
  const start = performance.now();
  await runTurns(gateway, conversations, 0, turns);
  const seconds = (performance.now() - start) / 1000;
  await stopOwingNothing(gateway);
  return turns / seconds;
}

/**
 * The write-ahead-log frames and commits `turns` messages cost (wal-frames.ts),
 * after one message per conversation has created them: what durability costs
 * the disk, counted, not timed.
 */
export async function pipelineWalFrames(dataDir: string, conversations: number, turns: number): Promise<WalCount> {
  const gateway = await startGateway(dataDir);
  await runTurns(gateway, conversations, 0, conversations);
  const count = await countWalFrames(gateway.db, async () => {
    await runTurns(gateway, conversations, conversations, turns);
    while ((await owedNow(gateway)) !== 0) await new Promise((resolve) => setTimeout(resolve, 5));
  });
  await stopOwingNothing(gateway);
  return count;
}

async function startGateway(dataDir: string, databaseFile?: string): Promise<Gateway> {
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
  return gateway;
}

/** Messages `from` … `from + turns − 1`, message i to conversation i mod `conversations`, all at once. */
async function runTurns(gateway: Gateway, conversations: number, from: number, turns: number): Promise<void> {
  const message = (i: number): InboundMessage => {
    const peer = i % conversations;
    return {
      source: { platform: 'local', chatId: `bench-${peer}`, chatType: 'direct', senderId: `person-${peer}`, senderName: 'Bench' },
      text: `message ${i}`,
      messageRef: `bench-${i}`,
    };
  };
  await Promise.all(Array.from({ length: turns }, (_, i) => gateway.pipeline.handle(message(from + i))));
}

async function stopOwingNothing(gateway: Gateway): Promise<void> {
  const owed = await owedNow(gateway);
  await gateway.stop();
  if (owed !== 0) throw new Error(`replies still owed after the run: ${owed}`);
}

/** The owed count, read through the API (which commits what is queued first). */
async function owedNow(gateway: Gateway): Promise<number | undefined> {
  const overview = (await gateway.api.dispatch('getOverview', undefined)) as { ok: boolean; value?: { deliveries: { owed: number } } };
  return overview.ok ? overview.value?.deliveries.owed : undefined;
}
