import { client, xml, type Client, type Element } from '@xmpp/client';

/** One message a test person received. */
export interface ReceivedMessage {
  readonly at: number;
  /** The full `from` (a room message: `room@conference/nick`). */
  readonly from: string;
  readonly type: string;
  readonly body: string | null;
  readonly id: string | undefined;
  readonly originId: string | undefined;
  /** The XEP-0085 chat state it carries, if any. */
  readonly chatState: string | undefined;
}

/**
 * A person on the test prosody, with a plain @xmpp/client of their own: online
 * (initial presence), in rooms, writing, and keeping every message they get.
 */
export class XmppUser {
  readonly received: ReceivedMessage[] = [];
  private readonly xmpp: Client;
  private readonly joined = new Set<string>();
  private sequence = 0;

  constructor(
    readonly local: string,
    password: string,
    port: number,
    readonly domain = 'localhost',
  ) {
    this.xmpp = client({ service: `xmpp://127.0.0.1:${port}`, domain, username: local, password, resource: 'test' });
    this.xmpp.reconnect.stop();
    this.xmpp.on('error', () => {});
    this.xmpp.on('stanza', (stanza: Element) => {
      if (stanza.name === 'presence') {
        const self = stanza.getChild('x', 'http://jabber.org/protocol/muc#user')?.getChildren('status').some((status) => status.attrs.code === '110');
        const room = (stanza.attrs.from ?? '').split('/')[0]!;
        if (self && stanza.attrs.type !== 'unavailable') this.joined.add(room);
        return;
      }
      if (stanza.name !== 'message') return;
      const chatState = stanza.children.find((child): child is Element => typeof child !== 'string' && child.attrs.xmlns === 'http://jabber.org/protocol/chatstates');
      this.received.push({
        at: Date.now(),
        from: stanza.attrs.from ?? '',
        type: stanza.attrs.type ?? 'normal',
        body: stanza.getChildText('body'),
        id: stanza.attrs.id,
        originId: stanza.getChild('origin-id', 'urn:xmpp:sid:0')?.attrs.id,
        chatState: chatState?.name,
      });
    });
  }

  get jid(): string {
    return `${this.local}@${this.domain}`;
  }

  async start(): Promise<void> {
    // The library says "online" before stream management is on; a stanza sent in between makes
    // its count differ from the server's, and prosody drops the client. Wait for <enabled/>.
    const enabled = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5_000);
      this.xmpp.on('nonza', (element: Element) => {
        if (element.name === 'enabled' || element.name === 'failed') {
          clearTimeout(timer);
          setImmediate(resolve);
        }
      });
    });
    await this.xmpp.start();
    await enabled;
    await this.xmpp.send(xml('presence', {}));
  }

  async stop(): Promise<void> {
    await Promise.race([this.xmpp.stop().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000))]);
    this.xmpp.socket?.destroy();
  }

  /** Joins a room (without history) and waits until the room says we are in. */
  async join(room: string, nick = this.local): Promise<void> {
    this.joined.delete(room);
    await this.xmpp.send(xml('presence', { to: `${room}/${nick}` }, xml('x', { xmlns: 'http://jabber.org/protocol/muc' }, xml('history', { maxstanzas: '0' }))));
    for (const deadline = Date.now() + 10_000; !this.joined.has(room); ) {
      if (Date.now() > deadline) throw new Error(`${this.local} could not join ${room}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  isIn(room: string): boolean {
    return this.joined.has(room);
  }

  /** A chat message with an id of its own, as real clients send them. */
  async say(to: string, body: string, id = this.nextId()): Promise<void> {
    await this.xmpp.send(xml('message', { to, type: 'chat', id }, xml('body', {}, body)));
  }

  async sayInRoom(room: string, body: string): Promise<void> {
    await this.xmpp.send(xml('message', { to: room, type: 'groupchat', id: this.nextId() }, xml('body', {}, body)));
  }

  private nextId(): string {
    return `${this.local}-${Date.now().toString(36)}-${++this.sequence}`;
  }

  /** Messages with a body from `from` (a bare JID matches every resource or nick under it). */
  bodiesFrom(from: string): ReceivedMessage[] {
    return this.received.filter((message) => message.body !== null && (message.from === from || message.from.startsWith(`${from}/`)));
  }
}
