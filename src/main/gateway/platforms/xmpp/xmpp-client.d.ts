/**
 * The small part of @xmpp/client 0.14 (plain JavaScript, ESM only, no types of
 * its own) that the XMPP adapter uses.
 */
declare module '@xmpp/client' {
  import type { EventEmitter } from 'node:events';

  export interface Element {
    name: string;
    attrs: Record<string, string | undefined>;
    children: (Element | string)[];
    parent: Element | null;
    is(name: string, xmlns?: string): boolean;
    getChild(name: string, xmlns?: string): Element | undefined;
    getChildren(name: string, xmlns?: string): Element[];
    getChildText(name: string, xmlns?: string): string | null;
    getText(): string;
    append(...children: (Element | string)[]): Element;
    toString(): string;
  }

  export function xml(name: string, attrs?: Record<string, string | number | undefined> | null, ...children: (Element | string)[]): Element;

  export interface Jid {
    local: string;
    domain: string;
    resource: string;
    bare(): Jid;
    toString(): string;
  }

  export interface StreamManagement extends EventEmitter {
    enabled: boolean;
    id: string;
    inbound: number;
    outbound: number;
    outbound_q: { stanza: Element; stamp: string }[];
    timeout: number;
    requestAckInterval: number;
    requestAckDebounce: number;
  }

  export interface MiddlewareContext {
    readonly stanza: Element;
    readonly entity: Client;
  }

  export interface Client extends EventEmitter {
    status: string;
    jid: Jid | null;
    socket: { destroy(): void; secure?: boolean } | null;
    options: { service: string; domain: string; lang?: string };
    timeout: number;
    streamManagement: StreamManagement;
    reconnect: { stop(): void; start(): void; delay: number };
    middleware: {
      use(fn: (context: MiddlewareContext, next: () => Promise<unknown>) => unknown): void;
      filter(fn: (context: MiddlewareContext, next: () => Promise<unknown>) => unknown): void;
    };
    iqCaller: { request(element: Element, timeout?: number): Promise<Element> };
    isSecure(): boolean;
    connect(service: string): Promise<void>;
    open(options: { domain: string; lang?: string }): Promise<Element>;
    start(): Promise<Jid>;
    stop(): Promise<void>;
    disconnect(): Promise<void>;
    send(element: Element): Promise<void>;
    _onData(data: Buffer | string): void;
  }

  export interface ClientOptions {
    service: string;
    domain: string;
    username: string;
    password: string;
    resource?: string;
    lang?: string;
    timeout?: number;
    credentials?: unknown;
  }

  export function client(options: ClientOptions): Client;
  export function jid(value: string): Jid;
}
