import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

/** One message the sink accepted (or took in before a fault refused it). */
export interface SinkMessage {
  readonly mailFrom: string;
  readonly to: readonly string[];
  /** The message as the client sent it (CRLF line ends). */
  readonly raw: string;
  readonly at: number;
  /** Whether the sink answered 250 (false: a fault refused it, or the client was gone). */
  readonly accepted: boolean;
}

/** What a fault makes the sink answer instead of accepting: an SMTP reply code and text. */
export interface SinkRefusal {
  readonly code: number;
  readonly text: string;
}

/** A hook run once a message's DATA is complete, before the sink answers: a refusal, or undefined to accept. */
export type BeforeAccept = (message: Omit<SinkMessage, 'accepted'>) => Promise<SinkRefusal | undefined> | SinkRefusal | undefined;

export interface SmtpSinkOptions {
  /** Logins the sink accepts (address → password); others get 535. */
  readonly logins: ReadonlyMap<string, string>;
  /** Called for each accepted message and recipient: e.g. put it in that user's dovecot mailbox (with a Return-Path). */
  readonly deliver?: (recipient: string, raw: string, mailFrom: string) => Promise<void>;
  /** The largest message accepted (SIZE); default 30 MB. */
  readonly maxBytes?: number;
}

/**
 * An SMTP server on 127.0.0.1 (the `smtp-server` package, the real protocol):
 * AUTH PLAIN/LOGIN without TLS (loopback), every message kept in `received`.
 * `beforeAccept` decides per message whether it is accepted, refused with a
 * code (4xx, 5xx), or held (a hook that waits: a test kills the client then).
 */
export class SmtpSink {
  readonly received: SinkMessage[] = [];
  private server: SMTPServer | undefined;
  private port = 0;
  private hook: BeforeAccept | undefined;
  private readonly listeners = new Set<(message: SinkMessage) => void>();

  constructor(private readonly options: SmtpSinkOptions) {}

  get address(): { host: '127.0.0.1'; port: number } {
    return { host: '127.0.0.1', port: this.port };
  }

  /** Replaces the hook run before each message is accepted; returns a function that removes it. */
  beforeAccept(hook: BeforeAccept | undefined): () => void {
    this.hook = hook;
    return () => {
      if (this.hook === hook) this.hook = undefined;
    };
  }

  onMessage(listener: (message: SinkMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Messages to one recipient, accepted or not, in arrival order. */
  to(address: string): SinkMessage[] {
    return this.received.filter((message) => message.to.includes(address.toLowerCase()));
  }

  async start(port = 0): Promise<void> {
    const maxBytes = this.options.maxBytes ?? 30 * 1024 * 1024;
    const server = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      size: maxBytes,
      logger: false,
      banner: 'homing test sink',
      onAuth: (auth, _session, callback) => {
        const expected = this.options.logins.get(String(auth.username).toLowerCase());
        if (expected !== undefined && expected === auth.password) return callback(null, { user: auth.username });
        return callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
      },
      onData: (stream: SMTPServerDataStream, session: SMTPServerSession, callback) => {
        const parts: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => parts.push(chunk));
        stream.on('end', () => {
          void this.finish(Buffer.concat(parts).toString('utf8'), session, stream.sizeExceeded, callback);
        });
      },
    });
    server.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const address = server.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async finish(raw: string, session: SMTPServerSession, tooLarge: boolean, callback: (error?: Error | null) => void): Promise<void> {
    const envelope = session.envelope;
    const mailFrom = envelope.mailFrom === false ? '' : envelope.mailFrom.address;
    const to = envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase());
    const base = { mailFrom, to, raw, at: Date.now() };
    if (tooLarge) return callback(Object.assign(new Error('Message too large'), { responseCode: 552 }));
    let refusal: SinkRefusal | undefined;
    try {
      refusal = await this.hook?.(base);
    } catch (error) {
      refusal = { code: 451, text: `sink hook failed: ${String(error)}` };
    }
    if (refusal) {
      this.record({ ...base, accepted: false });
      return callback(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
    }
    for (const recipient of to) await this.options.deliver?.(recipient, raw, mailFrom).catch(() => undefined);
    this.record({ ...base, accepted: true });
    callback(null);
  }

  private record(message: SinkMessage): void {
    this.received.push(message);
    for (const listener of this.listeners) listener(message);
  }
}

/** A header's value in a raw message (the first, unfolded), or undefined. */
export function headerOf(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? '';
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const match = new RegExp(`^${name.replace(/-/g, '\\-')}:[ \\t]*(.*)$`, 'im').exec(unfolded);
  return match?.[1]?.trim();
}
