import { parseBotLine, type BotLine, type KillRecord } from './analyze';

/**
 * What the chaos run needs from the chat platform it runs on: the real server
 * (ngircd) or the fake Bot API, the harness's people on it, and what they saw.
 * run.ts drives the gateway, the kills and the figures the same way for each.
 */
export interface ChaosPlatform {
  /** The config's `platforms` section for the gateway. */
  readonly platformsConfig: Record<string, unknown>;
  /** Environment the gateway needs (a token variable). */
  readonly env: NodeJS.ProcessEnv;
  /** The harness's people, by name. */
  readonly users: readonly string[];
  /** Where the group requests go (the channel, the group chat): a conversation name. */
  readonly group: string;
  /**
   * Where a request's reply must arrive, when the platform has no group: email
   * sends "group" requests into a second thread of the sender's. Absent: the
   * group, or the sender's direct messages.
   */
  conversationOf?(user: string, inGroup: boolean): string;
  /** Resolves once a freshly started gateway's bot can take messages. */
  whenBotReady(timeoutMs: number): Promise<void>;
  /** One request from a person, in the group or by direct message; false when it cannot be sent now. */
  send(user: string, inGroup: boolean, text: string): boolean;
  /** The server away and back (an IRC server restart, the Bot API unreachable). */
  restartServer(random: () => number): Promise<void>;
  /** The last moment a reply was seen mid-way (a line k/N with 1 < k < N). */
  lastMidReplyAt(): number;
  /** Per conversation (the group, or a person's name for their direct messages), the bot's lines as received. */
  streams(): Map<string, BotLine[]>;
  /** Request id → when the platform handed it to Homing (counted as the run defines it), and the handing order. */
  handed(kills: readonly KillRecord[]): { handed: Map<string, number>; handedOrder: Map<string, number> };
  /** Bot lines nobody could observe (the person was away). */
  observerGaps(): number;
  dispose(): Promise<void>;
}

// What the platforms share in making themselves a ChaosPlatform.

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** How long a restarted server stays away: one to three seconds, from the run's seed. */
export const outage = (random: () => number) => sleep(1_000 + random() * 2_000);

/** The request a person's text carries (`req-0042`), if any. */
export const requestIn = (text: string): string | undefined => /\breq-\d+\b/.exec(text)?.[0];

/** Whether a bot line is line k/N of a reply with 1 < k < N: a reply seen mid-way. */
export function isMidReply(text: string): boolean {
  const parsed = parseBotLine(text);
  return parsed.kind === 'reply' && parsed.index > 1 && parsed.index < parsed.total;
}

/** Polls every 20 ms until `ready()`; throws `failure` once `timeoutMs` has passed. */
export async function pollUntil(ready: () => boolean, timeoutMs: number, failure: string): Promise<void> {
  for (let waited = 0; !ready(); waited += 20) {
    if (waited > timeoutMs) throw new Error(failure);
    await sleep(20);
  }
}

/**
 * The streams of a platform whose conversations are the group and each person's
 * direct messages, from the bot's messages (each split into its lines); a message
 * in no conversation of the run is left out.
 */
export function streamsOf(group: string, users: readonly string[], messages: Iterable<{ conversation: string | undefined; at: number; text: string }>): Map<string, BotLine[]> {
  const streams = new Map<string, BotLine[]>([[group, []], ...users.map((name) => [name, []] as [string, BotLine[]])]);
  for (const { conversation, at, text } of messages) {
    const stream = conversation === undefined ? undefined : streams.get(conversation);
    for (const line of stream ? text.split('\n') : []) stream!.push({ at, text: line });
  }
  return streams;
}

/** From every time a request was handed, in the platform's order: when it first was, and the order of first handings. */
export function firstHandings(entries: readonly { id: string; at: number }[]): { handed: Map<string, number>; handedOrder: Map<string, number> } {
  const handed = new Map<string, number>();
  const handedOrder = new Map<string, number>();
  for (const { id, at } of entries) {
    if (!handed.has(id)) handed.set(id, at);
    if (!handedOrder.has(id)) handedOrder.set(id, handedOrder.size);
  }
  return { handed, handedOrder };
}

/** Takes a fake service away for an outage, then brings it back on the same port (as an outage of the real one ends). */
export async function restartFake(fake: { stop(): Promise<void>; start(port: number): Promise<unknown> }, port: number, random: () => number): Promise<void> {
  await fake.stop();
  await outage(random);
  await fake.start(port);
}

/** Starts a fake service, its stop registered first so that a failure while starting still stops it. */
export async function startFake<T extends { start(): Promise<unknown>; stop(): Promise<void> }>(fake: T, register: (dispose: () => Promise<void>) => void): Promise<T> {
  register(() => fake.stop());
  await fake.start();
  return fake;
}
