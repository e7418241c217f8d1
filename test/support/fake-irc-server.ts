import { createServer, type Server, type Socket } from 'node:net';
import { waitUntil } from './wait';

/**
 * An IRC server on 127.0.0.1 for what a real ngircd cannot produce: lines a
 * hostile or broken server sends, and IRCv3 accounts (ngircd has no services,
 * no account-tag). It speaks the real wire format: CAP LS/REQ/ACK/END, NICK +
 * USER → 001…005 and an end of MOTD, PING → PONG, JOIN echoed (with the
 * account under extended-join), WHOIS answered with 311/330/318, QUIT → ERROR.
 * Everything else the client sends is recorded, for the test to read.
 * Sources (cited per behaviour below): RFC 2812 (client protocol, which
 * updates RFC 1459), the IRCv3 specs (ircv3/ircv3-specifications,
 * extensions/*.md), and ngircd's source (ngircd/ngircd, src/ngircd/*.c,
 * messages.h) where the fake copies what ngircd sends.
 */

export const FAKE_SERVER_NAME = 'irc.fake.test';

export interface FakeIrcOptions {
  /** The capabilities offered on `CAP LS` (the client takes those it wants). */
  readonly caps?: readonly string[];
  /** Who is logged in to which account, for WHOIS (330) and extended-join. */
  readonly accounts?: Readonly<Record<string, string>>;
}

export interface FakeIrcClient {
  /** Lines the client sent, without CR LF, in order. */
  readonly lines: string[];
  /** The nick it registered with (after the server accepted it). */
  nick(): string | undefined;
  /** Capabilities the server acknowledged. */
  readonly enabledCaps: Set<string>;
  /** Writes one line to the client (CR LF added). */
  send(line: string): void;
  /** Writes raw bytes, line endings and all (for broken framing). */
  sendRaw(data: string | Buffer): void;
  /** The PRIVMSGs (`target`, `text`) and NOTICEs the client sent. */
  privmsgs(): { target: string; text: string }[];
  notices(): { target: string; text: string }[];
  /** Resolves when the client has answered a PING: every line sent before it has been handled. */
  roundTrip(timeoutMs?: number): Promise<void>;
  readonly socket: Socket;
}

export interface FakeIrcServer {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly clients: FakeIrcClient[];
  /** The next client that completes registration (or one that already has). */
  registered(timeoutMs?: number): Promise<FakeIrcClient>;
  close(): Promise<void>;
}

export async function startFakeIrcServer(options: FakeIrcOptions = {}): Promise<FakeIrcServer> {
  const clients: FakeIrcClient[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    clients.push(serve(socket, options));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    host: '127.0.0.1',
    port,
    clients,
    registered: async (timeoutMs = 5_000) => {
      await waitUntil('a client to register with the fake IRC server', () => clients.some((client) => client.nick() !== undefined), timeoutMs);
      return clients.filter((client) => client.nick() !== undefined).at(-1)!;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function serve(socket: Socket, options: FakeIrcOptions): FakeIrcClient {
  const lines: string[] = [];
  const enabledCaps = new Set<string>();
  let buffered = '';
  let nick: string | undefined;
  let wantedNick: string | undefined;
  let gotUser = false;
  let negotiating = false;
  let pings = 0;
  // Every line ends in CR LF: RFC 2812 2.3; ngircd conn.c `Conn_WriteStr` appends "\r\n".
  const write = (line: string): void => {
    if (!socket.destroyed) socket.write(`${line}\r\n`);
  };
  // Prefix `nick!user@host`: RFC 2812 2.3.1 (`prefix`). The user cut to 9 characters is ngircd's STRICT_RFC limit
  // (defines.h CLIENT_USER_LEN 10 incl. NUL, citing RFC 2812 1.2.1); its default build allows 19.
  const from = (who: string) => `${who}!${who.toLowerCase().slice(0, 9)}@fake.host`;

  // Registration completes once NICK and USER have both arrived (RFC 2812 3.1), and not while CAP
  // negotiation is open (IRCv3 capability-negotiation.md, "Connection Registration": not before `CAP END`).
  const welcome = (): void => {
    if (nick || !wantedNick || !gotUser || negotiating) return;
    nick = wantedNick;
    // 001–004 on successful registration: RFC 2812 5.1 ("The server sends Replies 001 to 004"); texts as
    // ngircd messages.h RPL_WELCOME_MSG…RPL_MYINFO_MSG, shortened (both end 001 with nick!user@host; the fake with the nick).
    write(`:${FAKE_SERVER_NAME} 001 ${nick} :Welcome to the fake network ${nick}`);
    write(`:${FAKE_SERVER_NAME} 002 ${nick} :Your host is ${FAKE_SERVER_NAME}`);
    write(`:${FAKE_SERVER_NAME} 003 ${nick} :This server was created today`);
    write(`:${FAKE_SERVER_NAME} 004 ${nick} ${FAKE_SERVER_NAME} fake-1.0 iow ntikl`);
    // 005 is RPL_ISUPPORT, not RFC 2812's RPL_BOUNCE: draft-brocklesby-irc-isupport-03 (CHANTYPES, CASEMAPPING,
    // NICKLEN, PREFIX); ngircd messages.h RPL_ISUPPORT1_MSG sends CASEMAPPING=ascii and PREFIX=(qaohv)~&@%+ instead.
    write(`:${FAKE_SERVER_NAME} 005 ${nick} CHANTYPES=# CASEMAPPING=rfc1459 NICKLEN=30 PREFIX=(ov)@+ :are supported by this server`);
    // 376 RPL_ENDOFMOTD ends registration's burst: RFC 2812 5.1; text as ngircd messages.h RPL_ENDOFMOTD_MSG
    // (no 375/372 before it; ngircd sends 422 ERR_NOMOTD instead when it has no MOTD file, irc-info.c IRC_Show_MOTD).
    write(`:${FAKE_SERVER_NAME} 376 ${nick} :End of MOTD command`);
  };

  const onLine = (line: string): void => {
    lines.push(line);
    // Parameters, the last after " :" may hold spaces: RFC 2812 2.3.1 (`trailing`). Tags and a client prefix are
    // not parsed (IRCv3 message-tags.md lets a client send `@tags`; this fake offers no tag caps).
    const [head, ...rest] = line.split(' :');
    const trailing = rest.length > 0 ? rest.join(' :') : undefined;
    const words = head!.split(' ').filter(Boolean);
    const command = (words[0] ?? '').toUpperCase();
    const params = trailing === undefined ? words.slice(1) : [...words.slice(1), trailing];
    switch (command) {
      case 'CAP':
        // CAP LS suspends registration until CAP END and answers `CAP * LS :<caps>` (`*` before a nick):
        // IRCv3 capability-negotiation.md, "The CAP LS subcommand"; ngircd irc-cap.c Handle_CAP_LS.
        if (params[0] === 'LS') {
          negotiating = true;
          write(`:${FAKE_SERVER_NAME} CAP * LS :${(options.caps ?? []).join(' ')}`);
        } else if (params[0] === 'REQ') {
          // The set is ACKed or NAKed as a whole, a NAK changing nothing: capability-negotiation.md, "The CAP REQ
          // subcommand" and "The CAP NAK subcommand"; ngircd irc-cap.c Handle_CAP_REQ. Unlike the spec and ngircd, a
          // REQ does not itself suspend registration here, and a `-cap` (disable) is NAKed.
          const asked = (params[1] ?? '').split(' ').filter(Boolean);
          const offered = new Set(options.caps ?? []);
          if (asked.every((cap) => offered.has(cap))) {
            for (const cap of asked) enabledCaps.add(cap);
            write(`:${FAKE_SERVER_NAME} CAP * ACK :${asked.join(' ')}`);
          } else {
            write(`:${FAKE_SERVER_NAME} CAP * NAK :${asked.join(' ')}`);
          }
        } else if (params[0] === 'END') {
          // capability-negotiation.md, "The CAP END subcommand": registration continues.
          negotiating = false;
          welcome();
        }
        return;
      // NICK and USER: RFC 2812 3.1.2 and 3.1.3. No 433 ERR_NICKNAMEINUSE and no NICKLEN check: every nick is taken as is.
      case 'NICK':
        wantedNick = params[0];
        welcome();
        return;
      case 'USER':
        gotUser = true;
        welcome();
        return;
      // PING → PONG: RFC 2812 3.7.2/3.7.3; `PONG <server> :<token>` echoing the token is ngircd irc-login.c
      // IRC_PING (non-STRICT_RFC: "Some clients depend on the argument being returned").
      case 'PING':
        write(`:${FAKE_SERVER_NAME} PONG ${FAKE_SERVER_NAME} :${params[0] ?? ''}`);
        return;
      // JOIN: echoed to the joiner, then RPL_NAMREPLY that includes the joiner, then 366: RFC 2812 3.2.1 and 5.1
      // (353 "=" for a public channel). No 332 RPL_TOPIC: the fake's channels have no topic. With extended-join:
      // `JOIN #chan <account|*> :<realname>`, IRCv3 extensions/extended-join.md. Before registration: ignored
      // (ngircd parse.c answers 451 ERR_NOTREGISTERED). The real name is always "Homing": chosen, not what USER said.
      case 'JOIN': {
        if (!nick) return;
        for (const channel of (params[0] ?? '').split(',').filter(Boolean)) {
          const account = options.accounts?.[nick] ?? '*';
          write(enabledCaps.has('extended-join') ? `:${from(nick)} JOIN ${channel} ${account} :Homing` : `:${from(nick)} JOIN ${channel}`);
          write(`:${FAKE_SERVER_NAME} 353 ${nick} = ${channel} :${nick}`);
          write(`:${FAKE_SERVER_NAME} 366 ${nick} ${channel} :End of NAMES list`);
        }
        return;
      }
      // WHOIS [<target>] <mask>: RFC 2812 3.6.2, 311 RPL_WHOISUSER then 318 RPL_ENDOFWHOIS (5.1); 330 "is logged in as"
      // is not in the RFCs: ngircd messages.h RPL_WHOISLOGGEDIN_MSG, sent by irc-info.c IRC_WHOIS_SendReply when
      // the client has an account name. Unknown nicks get 311 too (a real server answers 401 ERR_NOSUCHNICK): not modelled.
      case 'WHOIS': {
        if (!nick) return;
        const who = params[params.length - 1] ?? '';
        write(`:${FAKE_SERVER_NAME} 311 ${nick} ${who} ${who.toLowerCase()} fake.host * :${who}`);
        const account = options.accounts?.[who];
        if (account) write(`:${FAKE_SERVER_NAME} 330 ${nick} ${who} ${account} :is logged in as`);
        write(`:${FAKE_SERVER_NAME} 318 ${nick} ${who} :End of WHOIS list`);
        return;
      }
      // QUIT → ERROR, then the server closes: RFC 2812 3.1.7; ngircd conn.c Conn_Close sends
      // `ERROR :Closing connection: nick[user@host] (reason)`; the fake's text is shorter.
      case 'QUIT':
        write(`ERROR :Closing link (${params[0] ?? 'quit'})`);
        socket.end();
        return;
    }
  };

  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    // CR LF ends a line (RFC 2812 2.3); a bare LF is accepted too, as ngircd does outside STRICT_RFC (conn.c,
    // "non-RFC-compliant request (only CR or LF)"); a bare CR alone is not a line end here (ngircd takes it).
    while ((end = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, end).replace(/\r$/, '');
      buffered = buffered.slice(end + 1);
      if (line) onLine(line);
    }
  });

  const sent = (command: 'PRIVMSG' | 'NOTICE') =>
    lines.flatMap((line) => {
      const match = new RegExp(`^${command} (\\S+) :(.*)$`).exec(line);
      return match ? [{ target: match[1]!, text: match[2]! }] : [];
    });

  return {
    lines,
    nick: () => nick,
    enabledCaps,
    send: write,
    sendRaw: (data) => {
      if (!socket.destroyed) socket.write(data);
    },
    privmsgs: () => sent('PRIVMSG'),
    notices: () => sent('NOTICE'),
    roundTrip: async (timeoutMs = 5_000) => {
      // The client must answer PING with PONG carrying the token: RFC 2812 3.7.2.
      const token = `fake-rt-${++pings}`;
      write(`PING :${token}`);
      await waitUntil(`the client to answer PING ${token}`, () => lines.some((line) => line === `PONG ${token}` || line === `PONG :${token}`), timeoutMs);
    },
    socket,
  };
}
