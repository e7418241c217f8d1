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
  /** The `from` of its XEP-0203 `<delay>`, if it has one (the server's offline store, a room's history). */
  readonly delayFrom: string | undefined;
}

/**
 * A person on the test prosody, with a plain @xmpp/client of their own: online
 * (initial presence), in rooms, writing, and keeping every message they get.
 */
export class XmppUser {
  readonly received: ReceivedMessage[] = [];
  /** Room occupants we saw come and go (`room/nick`). */
  readonly occupants = new Set<string>();
  /** Every available presence from a room occupant (`room/nick`), in order: a rejoin shows here again. */
  readonly presences: { readonly from: string; readonly at: number }[] = [];
  /** Stretches of time this person was not in their rooms (from, to; `to` undefined while it lasts). */
  readonly gaps: { from: number; to: number | undefined }[] = [];
  private xmpp: Client;
  private readonly joined = new Set<string>();
  private readonly rooms = new Map<string, string>();
  private sequence = 0;
  private online = false;

  constructor(
    readonly local: string,
    private readonly password: string,
    private readonly port: number,
    readonly domain = 'localhost',
  ) {
    this.xmpp = this.newClient();
  }

  private newClient(): Client {
    const xmpp = client({ service: `xmpp://127.0.0.1:${this.port}`, domain: this.domain, username: this.local, password: this.password, resource: 'test' });
    xmpp.reconnect.stop();
    xmpp.on('error', () => {});
    xmpp.on('disconnect', () => {
      if (xmpp !== this.xmpp) return;
      this.online = false;
      this.joined.clear();
      if (this.gaps.at(-1)?.to !== undefined || this.gaps.length === 0) this.gaps.push({ from: Date.now(), to: undefined });
    });
    xmpp.on('stanza', (stanza: Element) => {
      if (stanza.name === 'presence') {
        const self = stanza.getChild('x', 'http://jabber.org/protocol/muc#user')?.getChildren('status').some((status) => status.attrs.code === '110');
        const from = stanza.attrs.from ?? '';
        const room = from.split('/')[0]!;
        if (stanza.attrs.type === 'unavailable') this.occupants.delete(from);
        else if (from.includes('/')) {
          this.occupants.add(from);
          this.presences.push({ from, at: Date.now() });
        }
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
        delayFrom: stanza.getChild('delay', 'urn:xmpp:delay')?.attrs.from,
      });
    });
    return xmpp;
  }

  get isOnline(): boolean {
    return this.online;
  }

  /** Logs in again after the server went away, and joins the rooms it was in. */
  async restart(): Promise<void> {
    const old = this.xmpp;
    old.removeAllListeners();
    old.on('error', () => {});
    old.socket?.destroy();
    this.xmpp = this.newClient();
    await this.start();
    for (const [room, nick] of this.rooms) await this.join(room, nick);
    const gap = this.gaps.at(-1);
    if (gap && gap.to === undefined) gap.to = Date.now();
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
    this.online = true;
  }

  async stop(): Promise<void> {
    await Promise.race([this.xmpp.stop().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000))]);
    this.xmpp.socket?.destroy();
  }

  /** Joins a room (without history) and waits until the room says we are in. */
  async join(room: string, nick = this.local): Promise<void> {
    this.joined.delete(room);
    this.rooms.set(room, nick);
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

  /** Resolves once the server answered a ping sent after everything before it: what we sent before is handled. */
  async roundTrip(): Promise<void> {
    await this.xmpp.iqCaller.request(xml('iq', { type: 'get', to: this.domain }, xml('ping', { xmlns: 'urn:xmpp:ping' })), 10_000);
  }

  /** Messages with a body from `from` (a bare JID matches every resource or nick under it). */
  bodiesFrom(from: string): ReceivedMessage[] {
    return this.received.filter((message) => message.body !== null && (message.from === from || message.from.startsWith(`${from}/`)));
  }
}
