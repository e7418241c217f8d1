/**
 * The small part of irc-framework 4.14 (plain JavaScript, no types of its own) that
 * the IRC adapter and its tests use.
 */
declare module 'irc-framework' {
  export interface IrcClientOptions {
    host: string;
    port: number;
    tls?: boolean;
    rejectUnauthorized?: boolean;
    nick: string;
    username?: string;
    gecos?: string;
    password?: string;
    version?: string | null;
    auto_reconnect?: boolean;
    /** Seconds between the client's own keep-alive PINGs. */
    ping_interval?: number;
    /** Seconds without any data before the client drops the connection. */
    ping_timeout?: number;
    /** The transport class (default: irc-framework's net/TLS transport). */
    transport?: unknown;
  }

  /** A PRIVMSG, ACTION or NOTICE as irc-framework reports it. */
  export interface IrcMessageEvent {
    nick: string;
    ident: string;
    hostname: string;
    target: string;
    message: string;
    tags: Record<string, string>;
    /** The IRCv3 `account` tag: the sender's services account, when the server sends it. */
    account?: string;
    /** Milliseconds since the epoch from the IRCv3 server-time tag, if the server sent one. */
    time?: number;
    from_server: boolean;
  }

  export interface IrcParsedLine {
    command: string;
    params: string[];
    nick: string;
    tags: Record<string, string>;
  }

  export class Client {
    constructor(options?: IrcClientOptions);
    connect(options?: IrcClientOptions): void;
    raw(...args: (string | number)[]): void;
    quit(message?: string): void;
    join(channel: string, key?: string): void;
    changeNick(nick: string): void;
    say(target: string, message: string): void;
    notice(target: string, message: string): void;
    ctcpRequest(target: string, type: string, ...params: string[]): void;
    caseLower(text: string): string;
    readonly connected: boolean;
    readonly user: { nick: string };
    readonly network: {
      supports(feature: string): string | boolean | undefined;
      readonly cap: { isEnabled(name: string): boolean };
    };
    readonly connection: {
      end(data?: string | null, hadError?: boolean): void;
      /** Where every line from the server enters irc-framework (one object per client, kept across reconnects). */
      addReadBuffer(line: string): void;
    };
    on(event: string, listener: (...args: never[]) => void): this;
    once(event: string, listener: (...args: never[]) => void): this;
    off(event: string, listener: (...args: never[]) => void): this;
    removeAllListeners(event?: string): this;
  }

  export function ircLineParser(line: string): IrcParsedLine | null;

  const ircFramework: { Client: typeof Client; ircLineParser: typeof ircLineParser };
  export default ircFramework;
}

declare module 'irc-framework/src/transports/net.js' {
  const NetTransport: unknown;
  export default NetTransport;
}
