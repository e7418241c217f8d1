import { createConnection, type Server, type Socket } from 'node:net';
import { listenAgain, stopListening } from './ports';

/** A message body that passed the relay, and when. */
export interface RelayedBody {
  readonly at: number;
  /** The relayed connection (1, 2, …: one per gateway login). */
  readonly connection: number;
  /** The body's text, XML entities decoded. */
  readonly body: string;
  /** The message's `id`, `to`, `from` and `type`, as written. */
  readonly id: string;
  readonly to: string;
  readonly from: string;
  readonly type: string;
  /** The `from` of the message's XEP-0203 `<delay>`, if it has one (a room's history; a stanza re-sent on a stream-management resume). */
  readonly delayFrom: string | undefined;
}

/**
 * A byte-for-byte TCP relay between the gateway's XMPP adapter and a real
 * prosody, on loopback. It changes nothing on the wire. It sees which message
 * bodies went each way and when (what the server handed to the gateway is a
 * fact, not a guess), and it can hold back what the server says to the gateway
 * — a message on its way whose acknowledgement never arrives — or refuse new
 * connections (the port closed) while the server is away.
 */
export class XmppRelay {
  /** Bodies the server handed to the gateway's socket. */
  readonly handed: RelayedBody[] = [];
  /** Bodies the gateway wrote to the server. */
  readonly sent: RelayedBody[] = [];
  /** When each relayed connection closed. */
  readonly closedAt = new Map<number, number>();
  private server: Server | undefined;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private connections = 0;
  private holding = false;
  private dropOn: RegExp | undefined;
  /** Called with every body the gateway writes (to arm a hold at the right moment). */
  onSent: ((body: RelayedBody) => void) | undefined;

  constructor(
    readonly port: number,
    private readonly upstreamPort: () => number,
  ) {}

  get isOpen(): boolean {
    return this.server !== undefined;
  }

  async open(): Promise<void> {
    if (this.server) return;
    this.server = await listenAgain(this.port, (client) => this.relay(client));
  }

  /** From now on nothing the server says reaches the gateway (it is dropped); the gateway's writes still go through. */
  hold(): void {
    this.holding = true;
  }

  release(): void {
    this.holding = false;
  }

  /**
   * The next time the gateway writes something matching `pattern`, it does not
   * reach the server and every relayed connection ends (a link that died just
   * as that request left), once.
   */
  dropConnectionsWhenSent(pattern: RegExp): void {
    this.dropOn = pattern;
  }

  /** Refuses new connections; relayed ones stay up. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await stopListening(server);
  }

  /**
   * Writes `bytes` to every relayed connection's gateway side, as if the server
   * had sent them (a hostile or broken server; nothing reaches prosody). Returns
   * how many connections got them.
   */
  inject(bytes: string | Buffer): number {
    let connections = 0;
    for (const pair of this.pairs) {
      if (pair.client.destroyed) continue;
      pair.client.write(bytes);
      connections++;
    }
    return connections;
  }

  /** Ends every relayed connection (as a server that went away does), keeping the port as it is. */
  dropConnections(): void {
    for (const pair of [...this.pairs]) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
  }

  async dispose(): Promise<void> {
    const closing = this.close();
    this.dropConnections();
    await closing;
  }

  private relay(client: Socket): void {
    const id = ++this.connections;
    const upstream = createConnection({ host: '127.0.0.1', port: this.upstreamPort() });
    const pair = { client, upstream };
    this.pairs.add(pair);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const end = () => {
      if (!this.pairs.delete(pair)) return;
      this.closedAt.set(id, Date.now());
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
    const fromClient = new BodyScanner((found) => {
      const entry = { at: Date.now(), connection: id, ...found };
      this.sent.push(entry);
      this.onSent?.(entry);
    });
    const fromServer = new BodyScanner((found) => this.handed.push({ at: Date.now(), connection: id, ...found }));
    client.on('data', (data: Buffer) => {
      if (this.dropOn?.test(data.toString('utf8'))) {
        this.dropOn = undefined;
        this.dropConnections();
        return;
      }
      fromClient.push(data);
      if (!upstream.destroyed) upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      if (this.holding) return;
      fromServer.push(data);
      if (!client.destroyed) client.write(data);
    });
  }
}

/** Finds each `<message …>…<body>…</body>…</message>` in a stream of XML text arriving in pieces. */
class BodyScanner {
  private text = '';

  constructor(private readonly found: (message: { body: string; id: string; to: string; from: string; type: string; delayFrom: string | undefined }) => void) {}

  push(data: Buffer): void {
    this.text += data.toString('utf8');
    const pattern = /<message\b([^>]*?)(?:\/>|>([\s\S]*?)<\/message>)/g;
    let end = 0;
    for (let match = pattern.exec(this.text); match; match = pattern.exec(this.text)) {
      end = pattern.lastIndex;
      const body = /<body(?:\s[^>]*)?>([^<]*)<\/body>/.exec(match[2] ?? '')?.[1];
      if (body === undefined) continue;
      const attr = (name: string) => decode(new RegExp(`\\s${name}=(?:"([^"]*)"|'([^']*)')`).exec(match[1]!)?.slice(1).find((v) => v !== undefined) ?? '');
      const delay = /<delay\b([^>]*)/.exec(match[2] ?? '')?.[1];
      const delayFrom = delay === undefined ? undefined : /\sfrom=(?:"([^"]*)"|'([^']*)')/.exec(delay)?.slice(1).find((v) => v !== undefined);
      this.found({ body: decode(body), id: attr('id'), to: attr('to'), from: attr('from'), type: attr('type') || 'normal', delayFrom: delayFrom === undefined ? undefined : decode(delayFrom) });
    }
    // Keep what may be the start of a message not complete yet.
    const open = this.text.lastIndexOf('<message');
    this.text = open >= end ? this.text.slice(open) : this.text.slice(Math.max(end, this.text.length - 16));
  }
}

function decode(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCodePoint(parseInt(code, 16)))
    .replace(/&amp;/g, '&');
}
