/**
 * One row of the intake conformance suite (test/conformance.e2e.test.ts): a
 * chat service as the real headless gateway meets it — a real server from
 * Debian (ngircd, prosody, dovecot) or a fake that behaves as the real service
 * does, each behaviour citing its source — and a person on it who may talk to
 * the agent. The suite's cases are written once against this interface; a
 * platform takes part in the cases its intake contract allows (IRC keeps
 * nothing while Homing is down, so it skips those).
 *
 * The agent in every case is test/fixtures/reply-agent.mjs, which answers
 * `You said: <text>`, so `replies()` can be matched against what was said.
 */
export type Where = 'direct' | 'group';

export interface ConformanceWorld {
  /** The platform's name in config and the ledger. */
  readonly platform: string;
  /** The gateway config's `platforms` section. */
  readonly platformsConfig: Record<string, unknown>;
  /** Environment the gateway needs (a token variable). */
  readonly env: NodeJS.ProcessEnv;
  /** Whether the service keeps a message sent while Homing is not connected (false for IRC). */
  readonly keepsWhileDown: boolean;
  /**
   * Where this world can address the bot. The suite's cases happen in the first
   * place, and `flood` and `failNextCatchUp` act there: put first the place whose
   * catch-up is the most demanding (a room read from its archive, a channel's history).
   */
  readonly places: readonly Where[];
  /** Resolves once a freshly started gateway can take messages (connected, its catch-up started). */
  whenBotReady(timeoutMs: number): Promise<void>;
  /** The person addresses the bot with `text` (a mention in a group); resolves once the service holds the message. */
  say(text: string, where: Where): Promise<void>;
  /** The bot's messages in that conversation as the person sees them, oldest first, one string per platform message. */
  replies(where: Where): Promise<string[]>;
  /**
   * Traffic larger than one catch-up page of the service while Homing is down
   * (e.g. 600 messages, 150 channels, where the service pages). Returns the
   * texts that address the bot: each must be answered once. Absent where the
   * service does not page its catch-up.
   */
  flood?(): Promise<readonly string[]>;
  /** The service's next catch-up read fails once with a transient error (a 502, a dropped connection). Absent where it has none. */
  failNextCatchUp?(): void;
  /**
   * State that decides whether a message addresses the bot, established before
   * a clean restart and used after it: `before` makes it (the bot answers in a
   * thread), `after` sends a message that is addressed only by that state and
   * returns where its answer appears. Absent where addressing is decided by the
   * message alone.
   */
  readonly remembers?: {
    before(): Promise<void>;
    after(text: string): Promise<void>;
    where: Where;
  };
  /**
   * The service's deduplication window for a resend (Matrix txnIds ~24 h in
   * Synapse, Discord nonces minutes). `hangNextSend()`: the server takes the
   * bot's next message (the person sees it) but its answer never comes, until
   * the returned function is called; the suite kills the gateway meanwhile.
   * `forget()` makes the server forget the keys it has seen, as if the window had
   * passed. Absent where the service does not deduplicate (every resend is
   * marked there already).
   */
  readonly dedup?: { readonly windowMs: number; hangNextSend(): () => void; forget(): void };
  /**
   * The person sends a file (a photo, a document, a voice note) addressed to the
   * bot, with `caption` as its text where the platform has captions (else as a
   * message of its own right before it, addressed to the bot); resolves once the
   * service holds it. Absent where the platform carries no files (IRC).
   */
  sendFile?(file: ConformanceFile, where: Where): Promise<void>;
  /**
   * From now on the bot's downloads of files hang (the service takes the request
   * and answers nothing) until the returned function is called: the suite kills
   * the gateway meanwhile, between a file's message saved and its file fetched.
   * Absent where the world cannot hold them.
   */
  holdDownloads?(): () => void;
  /** Stops what the world started. */
  dispose(): Promise<void>;
}

/** A file a person sends in a conformance case (ConformanceWorld.sendFile). */
export interface ConformanceFile {
  readonly kind: 'image' | 'document' | 'voice';
  /** The file's name as the person's client would give it. */
  readonly name: string;
  readonly mime: string;
  readonly bytes: Buffer;
  readonly caption?: string;
}
