import type ircFramework from 'irc-framework';
import { loadOnce } from '../../load-once';
import { boundedTransport } from './bounded-transport';

/**
 * irc-framework, loaded when the IRC adapter first connects: with its
 * dependencies it takes ~13 MB of memory and ~70 ms, which a gateway without
 * IRC should not pay at every start.
 */
export interface IrcLibrary {
  readonly Client: typeof ircFramework.Client;
  readonly ircLineParser: typeof ircFramework.ircLineParser;
  /** irc-framework's TCP/TLS transport, with a cap on the unfinished line it buffers (bounded-transport.ts). */
  readonly Transport: unknown;
}

export const loadIrcFramework = loadOnce(
  (): Promise<IrcLibrary> =>
    Promise.all([import('irc-framework'), import('irc-framework/src/transports/net.js')]).then(([irc, net]) => {
      const library = commonJs(irc);
      return { Client: library.Client, ircLineParser: library.ircLineParser, Transport: boundedTransport(commonJs(net)) };
    }),
);

/** A CommonJS module's exports, whether the loader gave them under `default` or not. */
function commonJs<M extends { default: unknown }>(module: M): M['default'] {
  return module.default ?? (module as unknown as M['default']);
}
