import type { BotLine, KillRecord } from './analyze';

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
