import { Gateway } from '../../src/main/gateway/gateway';
import { silentLogger } from '../../src/main/gateway/logger';
import type { InboundMessage } from '../../src/main/gateway/platforms/adapter';

/**
 * Runs `turns` messages through a real gateway's pipeline (session, built-in
 * agent, transcript, ledger, local delivery), spread over `conversations`
 * conversations, and returns turns per second. `databaseFile` ':memory:' keeps
 * the ledger and the session index in memory (transcripts stay on disk).
 */
export async function pipelineTurnsPerSecond(dataDir: string, conversations: number, turns: number, databaseFile?: string): Promise<number> {
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
  await Promise.all(Array.from({ length: turns }, (_, i) => gateway.pipeline.handle(message(i))));
  const seconds = (performance.now() - start) / 1000;
  const owed = (await gateway.api.dispatch('getOverview', undefined)) as { ok: boolean; value?: { deliveries: { owed: number } } };
  await gateway.stop();
  if (!owed.ok || owed.value?.deliveries.owed !== 0) throw new Error(`replies still owed after the run: ${JSON.stringify(owed)}`);
  return turns / seconds;
}
