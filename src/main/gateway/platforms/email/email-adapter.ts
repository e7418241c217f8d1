import type { ImapFlow } from 'imapflow';
import type { Transporter } from 'nodemailer';
import { loadMailLibs, type MailLibs } from './load-mail-libs';
import type { AdapterEvent, AdapterState, MessageLimits, PlatformAdapter, SendResult, SendTarget } from '../adapter';
import { emailAddressSchema, imapPort, smtpPort, type EmailConfig } from './config-schema';
import { trustedAuthServIds } from './trusted-auth-servers';
import { parseEmail, type IncomingEmail } from './inbound';
import { MailboxState } from './mailbox-state';
import { replyMail } from './outbound';
import { smtpFailure } from './send-errors';
import { ReceiveLoop } from '../skeleton/receive-loop';
import { emailIntake } from './intake';
import { AdapterSkeleton, type SkeletonOptions } from '../skeleton/skeleton';
import type { MediaBody, MediaOffer } from '../../media/media';
import { mailFileSource } from './attachments';
import { imapWords, isAuthFailure } from './imap-errors';
import { EmailMediaOpener } from './media-opener';

export interface EmailAdapterOptions extends SkeletonOptions {
  readonly config: EmailConfig;
  /** The mailbox password (IMAP and SMTP), from the secret store or `passwordEnv`. */
  readonly password: string | undefined;
  /** Where the mailbox position and thread subjects are kept. */
  readonly dataDir: string;
  /** Told when mail from a sender who may not talk to the agent is ignored (the window's activity log). */
  readonly onRefused?: (sender: string) => void;
  /** Connection, greeting and socket timeouts for IMAP and SMTP (default 30 s, 30 s, 5 min for IMAP and 2 min for SMTP). */
  readonly timeoutsMs?: { readonly connection?: number; readonly greeting?: number; readonly socket?: number };
}

/** How long a probe's NOOP may take before the connection is taken for dead. */
const PROBE_TIMEOUT_MS = 15_000;
/** Messages read from the folder in one pass; the rest come in the next. */
const BATCH = 100;
/** The largest IMAP answer accepted at all (a message up to maxMessageBytes, plus framing). */
const IMAP_SLACK_BYTES = 1024 * 1024;

/**
 * Email: IMAP (imapflow) reads one folder, SMTP (nodemailer) answers.
 *
 * Durable intake: a message is known by (folder, UIDVALIDITY, UID). Only
 * UIDs above the saved `lastUid` are read, and `lastUid` moves past a message
 * only once the pipeline says it is saved (or it was ignored for good), so a
 * crash or an IMAP restart neither loses a message nor takes one twice; the
 * one in flight at a crash is looked for in its conversation when it comes
 * again. New mail is announced by IDLE; the folder is also polled (the only
 * way when IDLE is off or missing).
 *
 * Files: a mail's attachments and inline pictures are offered with it as
 * media (attachments.ts), located by folder, UIDVALIDITY, UID and place; their
 * bytes stay on the server until the message's turn fetches them
 * (media-opener.ts), so a restart in between loses nothing.
 *
 * A reply is one email, never chunks: the limit is far above any reply. SMTP
 * has no deduplication (`idempotentSends: false`): a resend after the SMTP
 * transaction may have completed carries the ledger's marker as its first
 * line, and the same Message-ID.
 *
 * State: `connected` while IMAP is logged in; `degraded` while IMAP is away
 * (new mail waits on the server, replies still go out by SMTP);
 * `auth-failed` when the server refused the login.
 */
export class EmailAdapter implements PlatformAdapter {
  readonly platform = 'email';
  /** One email per reply: 2 MiB of text (the command agent's output is capped at 1 MiB), quoted-printable on the wire. */
  readonly limits: MessageLimits = { maxLength: 2 * 1024 * 1024, unit: 'bytes' };
  readonly intake = emailIntake;
  readonly idempotentSends = false;

  /** Logger, clock, state and events, message hand-on, reconnect backoff: what every adapter holds (skeleton/). */
  private readonly skeleton: AdapterSkeleton;
  private readonly config: EmailConfig;
  private readonly loop: ReceiveLoop;
  private readonly own: ReadonlySet<string>;
  private readonly allowed: ReadonlySet<string>;
  /** Whose Authentication-Results are believed (trusted-auth-servers.ts). */
  private readonly trustedAuthServIds: readonly string[];
  private client: ImapFlow | undefined;
  private mailbox: MailboxState | undefined;
  private transport: Transporter | undefined;
  /** Loaded by connect, before anything uses them. */
  private libs: MailLibs | undefined;
  /** UIDs whose intake timed out: the pipeline may have saved them after all, so their next handing is checked. */
  private readonly uncertain = new Set<number>();
  /** Set when the server announced mail; cleared when the folder is read. */
  private news = false;
  private readonly redact: (text: string) => string;
  private readonly media: EmailMediaOpener;

  constructor(private readonly options: EmailAdapterOptions) {
    this.config = options.config;
    this.skeleton = new AdapterSkeleton('email', options);
    this.own = new Set([options.config.address, ...options.config.ownAddresses]);
    this.allowed = new Set(options.config.allowFrom);
    this.trustedAuthServIds = trustedAuthServIds(options.config);
    const password = options.password;
    this.redact = (text) => (password ? text.split(password).join('[password]') : text);
    // Pauses end when the adapter stops, and on probe() and new mail (IDLE's EXISTS, a closed connection).
    this.loop = new ReceiveLoop('email', this.skeleton.logger, this.redact);
    this.media = new EmailMediaOpener({
      libs: async () => (this.libs ??= await loadMailLibs()),
      newClient: async () => {
        this.libs ??= await loadMailLibs();
        return this.newImapClient();
      },
      maxMessageBytes: this.config.maxMessageBytes,
      redact: this.redact,
      logger: this.skeleton.logger,
    });
  }

  state(): AdapterState {
    return this.skeleton.status.state;
  }

  onEvent(listener: (event: AdapterEvent) => void): () => void {
    return this.skeleton.status.listen(listener);
  }

  /** SMTP does not depend on IMAP: replies go out while the inbox is away. */
  canSend(): boolean {
    return this.loop.running && this.mailbox !== undefined && this.skeleton.status.up;
  }

  async connect(): Promise<void> {
    let libs: MailLibs;
    try {
      libs = await loadMailLibs();
    } catch (error) {
      this.setState('disconnected', `cannot load the mail libraries: ${describe(error)}`);
      return;
    }
    if (this.loop.running) return;
    this.libs = libs;
    if (this.options.password === undefined) {
      this.setState('disconnected', 'the mailbox password is not set: enter it in Platforms → Email');
      return;
    }
    try {
      this.mailbox ??= MailboxState.forAccount(this.options.dataDir, this.config.imap.host, this.imapUser(), this.skeleton.logger);
      this.mailbox.setOut(this.config.folder, this.skeleton.clock.now());
    } catch (error) {
      this.setState('disconnected', `cannot keep the mailbox position in the data directory: ${describe(error)}`);
      return;
    }
    this.skeleton.backoff.reset();
    this.transport = this.newTransport();
    this.loop.start(
      (generation) => this.run(generation),
      (words) => {
        this.dropClient();
        this.setState('degraded', `an unexpected error while reading mail: ${words}`);
      },
    );
  }

  async disconnect(): Promise<void> {
    this.loop.stop();
    const client = this.client;
    this.client = undefined;
    if (client) {
      // LOGOUT politely, but never wait long for a server that is gone.
      await Promise.race([client.logout().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000).unref?.())]);
      client.close();
    }
    this.transport?.close();
    this.transport = undefined;
    this.media.clear();
    this.setState('disconnected');
  }

  /**
   * After a sleep: the socket may look open long after the server dropped it.
   * A NOOP that gets no answer in 15 s closes the connection (and the loop
   * reconnects); then the folder is read at once.
   */
  async probe(): Promise<void> {
    const client = this.client;
    if (client) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const answered = await Promise.race([
        client.noop().then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
      if (!answered && this.client === client) client.close();
    }
    this.loop.wakeAll();
  }

  // ---- receiving -------------------------------------------------------

  private async run(generation: number): Promise<void> {
    while (this.loop.alive(generation)) {
      if (this.skeleton.status.state !== 'degraded') this.setState('connecting');
      const client = this.newImapClient();
      let closed = false;
      client.on('error', (error: Error) => this.skeleton.logger.debug('email: IMAP connection error', { error: this.redact(describe(error)) }));
      client.on('close', () => {
        closed = true;
        this.loop.wakeAll();
      });
      client.on('exists', () => {
        this.news = true;
        this.loop.wakeAll();
      });
      try {
        await client.connect();
        if (!this.loop.alive(generation)) {
          client.close();
          return;
        }
        await client.mailboxOpen(this.config.folder);
      } catch (error) {
        client.close();
        if (!this.loop.alive(generation)) return;
        if (isAuthFailure(error)) {
          this.loop.halt();
          this.setState('auth-failed', `the IMAP server refused the login for ${this.imapUser()}: check the user name and password`);
          return;
        }
        this.setState('degraded', `cannot read mail from ${this.config.imap.host}: ${this.redact(imapWords(error))}; replies still go out by SMTP`);
        await this.pause(this.skeleton.backoff.next(), generation);
        continue;
      }
      this.client = client;
      this.skeleton.backoff.reset();
      this.skeleton.logger.info('email: reading mail', { folder: this.config.folder, idle: this.useIdle(client) });
      if (this.config.requireAuthenticated && this.trustedAuthServIds.length === 0) {
        this.skeleton.logger.warn(
          'email: requireAuthenticated is on, but no mail server is trusted to verify senders, so no mail is answered: set email.trustedAuthServId to the first word of the Authentication-Results header your mail server adds',
        );
      }
      this.setState('connected');
      try {
        while (this.loop.alive(generation) && !closed) {
          const taken = await this.readNew(client, generation);
          if (!this.loop.alive(generation) || closed) break;
          if (taken === 'again') {
            await this.pause(1_000, generation);
            continue;
          }
          if (taken === 'more') continue;
          await this.waitForNews(client, generation);
        }
      } catch (error) {
        if (!this.loop.alive(generation)) return;
        this.skeleton.logger.warn('email: lost the IMAP connection', { error: this.redact(describe(error)) });
      }
      this.dropClient();
      if (!this.loop.alive(generation)) return;
      this.setState('degraded', `lost the connection to ${this.config.imap.host}; reconnecting (replies still go out by SMTP)`);
      await this.pause(this.skeleton.backoff.next(), generation);
    }
  }

  private useIdle(client: ImapFlow): boolean {
    return this.config.idle && client.capabilities.has('IDLE');
  }

  /** Sleeps until the server announces mail (IDLE), the poll interval passes, the connection drops, or probe(). */
  private async waitForNews(client: ImapFlow, generation: number): Promise<void> {
    if (this.news) return;
    const waited = this.pause(this.config.pollIntervalSeconds * 1000, generation);
    // A command issued later (the next FETCH) ends IDLE by itself.
    if (this.useIdle(client)) client.idle().catch((error: unknown) => this.skeleton.logger.debug('email: IDLE ended', { error: this.redact(describe(error)) }));
    await waited;
  }

  /** Reads the folder's messages past the saved position, oldest first: 'more' when a batch was full. */
  private async readNew(client: ImapFlow, generation: number): Promise<'done' | 'more' | 'again'> {
    const mailbox = this.mailbox!;
    const folder = this.config.folder;
    const box = client.mailbox;
    if (!box) throw new Error('the folder is not open');
    this.news = false;
    const uidValidity = String(box.uidValidity);
    let last = mailbox.lastUid(folder, uidValidity);
    if (last === undefined) {
      // Never read under this UIDVALIDITY: answer what arrives from now on, not the whole backlog;
      // or, where an earlier gateway set out to read the folder and stopped before its first
      // read was saved, what arrived since it set out.
      const newest = Math.max(0, Number(box.uidNext ?? 1) - 1);
      const setOut = mailbox.knows(folder) ? undefined : mailbox.setOutEarlier(folder);
      last = setOut === undefined ? newest : await this.lastBefore(client, setOut, newest);
      this.skeleton.logger[mailbox.knows(folder) ? 'warn' : 'info'](
        mailbox.knows(folder)
          ? 'email: the server renumbered the folder (its UIDVALIDITY changed); reading new mail from now on'
          : setOut === undefined
            ? 'email: reading new mail from now on (mail already in the folder is left alone)'
            : 'email: reading the mail that arrived since Homing first set out to read this folder',
        { folder },
      );
      mailbox.startAt(folder, uidValidity, last);
    }
    const found = await client.search({ uid: `${last + 1}:*` }, { uid: true });
    // `UID n:*` also returns the highest message when n is past it: only UIDs above the position are new.
    const uids = (found || []).filter((uid) => uid > last).sort((a, b) => a - b);
    for (const uid of uids.slice(0, BATCH)) {
      if (!this.loop.alive(generation)) return 'done';
      const taken = await this.take(client, uid, uidValidity);
      if (taken === 'again') return 'again';
    }
    return uids.length > BATCH ? 'more' : 'done';
  }

  /**
   * The highest UID of the mail that arrived before `at` (by its INTERNALDATE, the
   * server's time of arrival): SEARCH SINCE narrows to that day (RFC 3501 §6.4.4
   * compares dates only), then the times themselves decide.
   */
  private async lastBefore(client: ImapFlow, at: number, newest: number): Promise<number> {
    const sameDayOrLater = (await client.search({ since: new Date(at) }, { uid: true })) || [];
    let first: number | undefined;
    if (sameDayOrLater.length > 0) {
      for await (const message of client.fetch(sameDayOrLater.join(','), { uid: true, internalDate: true }, { uid: true })) {
        // INTERNALDATE has whole seconds: a mail in the second the gateway set out counts as after it.
        const arrived = message.internalDate === undefined ? Number.NaN : new Date(message.internalDate).getTime();
        if (arrived >= Math.floor(at / 1000) * 1000 && (first === undefined || message.uid < first)) first = message.uid;
      }
    }
    return first === undefined ? newest : Math.min(newest, first - 1);
  }

  private async take(client: ImapFlow, uid: number, uidValidity: string): Promise<'done' | 'again'> {
    const mailbox = this.mailbox!;
    const folder = this.config.folder;
    const meta = await client.fetchOne(String(uid), { uid: true, size: true }, { uid: true });
    if (!meta) {
      mailbox.done(folder, uid); // expunged meanwhile
      return 'done';
    }
    const tooLarge = (meta.size ?? 0) > this.config.maxMessageBytes;
    const fetched = await client.fetchOne(String(uid), tooLarge ? { uid: true, headers: true } : { uid: true, source: true }, { uid: true });
    const raw = fetched ? (tooLarge ? fetched.headers : fetched.source) : undefined;
    if (!raw) {
      mailbox.done(folder, uid);
      return 'done';
    }
    let email: IncomingEmail;
    try {
      email = await parseEmail(raw, {
        ownAddresses: this.own,
        trustedAuthServIds: this.trustedAuthServIds,
        fallbackId: `<uid-${uid}.${uidValidity}@homing.invalid>`,
        ...(tooLarge ? { tooLargeBytes: meta.size } : {}),
      });
    } catch (error) {
      this.skeleton.logger.warn('email: a message could not be read; skipped', { uid, error: describe(error) });
      mailbox.done(folder, uid);
      return 'done';
    }
    const refusal = this.admit(email);
    if (refusal !== undefined) {
      this.skeleton.logger.info(`email: not answering a message: ${refusal}`, { uid });
      if (refusal.startsWith('the sender is not') && email.fromAddress) this.options.onRefused?.(email.fromAddress);
      mailbox.done(folder, uid);
      return 'done';
    }
    const maybeSeen = mailbox.wasInFlight(folder, uid) || this.uncertain.has(uid);
    mailbox.begin(folder, uid, { root: email.threadRoot, subject: email.subject ?? '', last: email.messageId, at: this.skeleton.clock.now() });
    const outcome = await this.skeleton.handOn.wait({
      source: {
        platform: 'email',
        chatId: email.fromAddress!,
        chatType: 'direct',
        senderId: email.fromAddress!,
        threadId: email.threadRoot,
        ...(email.fromName ? { senderName: email.fromName } : {}),
        ...(email.subject ? { chatName: email.subject.slice(0, 200) } : {}),
        messageId: email.messageId,
      },
      text: email.text,
      messageRef: `imap:${folder}:${uidValidity}:${uid}`,
      replyTo: email.messageId,
      ...(maybeSeen ? { maybeSeen: true } : {}),
      ...(email.files.length > 0 ? { media: email.files.map((file) => this.offerOf(file, folder, uidValidity, uid)) } : {}),
    });
    if (outcome === 'timeout') {
      // No answer in time: it may still be saved. Kept in flight, so its next handing is checked.
      this.uncertain.add(uid);
      return 'again';
    }
    if (outcome === 'not-now') {
      mailbox.giveBack(folder);
      return 'again';
    }
    try {
      mailbox.done(folder, uid);
    } catch (error) {
      // Saved, but the position could not be written: when it comes again, it is looked for first.
      this.uncertain.add(uid);
      throw error;
    }
    this.uncertain.delete(uid);
    return 'done';
  }

  /** Why a message is not for the agent, or undefined when it is. */
  private admit(email: IncomingEmail): string | undefined {
    if (email.automatic !== undefined) return `automatic mail (${email.automatic})`;
    const from = email.fromAddress!;
    if (!this.allowed.has(from)) return 'the sender is not in allowFrom';
    if (email.auth.verdict === 'fail') return `the server says the sender is forged (${email.auth.server})`;
    if (this.config.requireAuthenticated && email.auth.verdict !== 'pass') return 'the server did not verify the sender (requireAuthenticated is on)';
    return undefined;
  }

  // ---- sending ---------------------------------------------------------

  async send(text: string, target: SendTarget): Promise<SendResult> {
    const to = emailAddressSchema.safeParse(target.chatId);
    if (!to.success) return { ok: false, retryable: false, permanent: true, notDelivered: true, error: 'not an email address' };
    const transport = this.transport;
    if (!transport || !this.loop.running) return { ok: false, retryable: true, permanent: false, notDelivered: true, error: 'email is not connected' };
    const thread = target.threadId === null ? undefined : this.mailbox?.thread(target.threadId);
    const mail = replyMail(this.config, text, { ...target, chatId: to.data }, thread, new Date(this.skeleton.clock.now()));
    try {
      await transport.sendMail({ ...mail, envelope: { from: this.config.address, to: to.data } });
      return { ok: true, platformMessageId: mail.messageId };
    } catch (error) {
      const failure = smtpFailure(error, this.redact);
      this.skeleton.logger.warn(`email: ${failure.error}`);
      return failure;
    }
  }

  // ---- files -----------------------------------------------------------

  /**
   * Opens a file a mail offered: the mail is read again from the server
   * (media-opener.ts), on a connection of its own, so a download never waits
   * behind the folder's reading nor holds it up. Works while the reading
   * connection is away too: it needs only the server.
   */
  readonly openMedia = (offer: Pick<MediaOffer, 'kind' | 'source' | 'mime' | 'name'>, options: { readonly signal: AbortSignal; readonly maxBytes: number }): Promise<MediaBody> =>
    this.media.open(offer, options);

  private offerOf(file: IncomingEmail['files'][number], folder: string, uidValidity: string, uid: number): MediaOffer {
    return {
      kind: file.kind,
      source: mailFileSource({ folder, uidValidity: Number(uidValidity), uid, index: file.index }),
      mime: file.mime,
      ...(file.name ? { name: file.name } : {}),
      size: file.size,
    };
  }

  // ---- plumbing --------------------------------------------------------

  private loaded(): MailLibs {
    if (!this.libs) throw new Error('email: the mail libraries are used before connect loaded them');
    return this.libs;
  }

  private imapUser(): string {
    return this.config.imap.user ?? this.config.address;
  }

  private newImapClient(): ImapFlow {
    const { imap } = this.config;
    const timeouts = this.options.timeoutsMs ?? {};
    return new (this.loaded().ImapFlow)({
      host: imap.host,
      port: imapPort(this.config),
      secure: imap.security === 'tls',
      doSTARTTLS: imap.security === 'starttls' ? true : imap.security === 'none' ? false : undefined,
      auth: { user: this.imapUser(), pass: this.options.password ?? '' },
      tls: { rejectUnauthorized: imap.verifyCertificate },
      logger: false,
      disableAutoIdle: true,
      // IDLE is renewed well inside the 30 minutes servers allow, and inside the socket timeout.
      maxIdleTime: 4 * 60 * 1000,
      connectionTimeout: timeouts.connection ?? 30_000,
      greetingTimeout: timeouts.greeting ?? 30_000,
      // Dovecot and most servers say "still here" every few minutes during IDLE; silence longer than this is a dead connection.
      socketTimeout: timeouts.socket ?? 5 * 60 * 1000,
      // A hostile or broken server cannot make Homing hold more than one message's worth.
      maxLiteralSize: this.config.maxMessageBytes + IMAP_SLACK_BYTES,
      maxResponseSize: this.config.maxMessageBytes + 2 * IMAP_SLACK_BYTES,
      maxLineLength: IMAP_SLACK_BYTES,
      clientInfo: { name: 'Homing' },
    });
  }

  private newTransport(): Transporter {
    const { smtp } = this.config;
    const timeouts = this.options.timeoutsMs ?? {};
    return this.loaded().createTransport({
      host: smtp.host,
      port: smtpPort(this.config),
      secure: smtp.security === 'tls',
      requireTLS: smtp.security === 'starttls',
      ignoreTLS: smtp.security === 'none',
      auth: { user: smtp.user ?? this.config.address, pass: this.options.password ?? '' },
      tls: { rejectUnauthorized: smtp.verifyCertificate },
      name: this.config.address.slice(this.config.address.lastIndexOf('@') + 1),
      connectionTimeout: timeouts.connection ?? 30_000,
      greetingTimeout: timeouts.greeting ?? 30_000,
      socketTimeout: timeouts.socket ?? 120_000,
      logger: false,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  private dropClient(): void {
    const client = this.client;
    this.client = undefined;
    client?.close();
  }

  private pause(ms: number, generation: number): Promise<void> {
    if (!this.loop.alive(generation)) return Promise.resolve();
    return this.loop.pause(ms, generation);
  }

  private setState(state: AdapterState, error?: string): void {
    this.skeleton.status.set(state, error);
  }

}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
