import type ircFramework from 'irc-framework';
import { commonJsExport, loadOnce } from '../../load-once';
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
    Promise.all([import('irc-framework'), import('irc-framework/src/transports/net.js')]).then(([irc, net]) => ({
      Client: commonJsExport(irc, 'Client', 'irc-framework'),
      ircLineParser: commonJsExport(irc, 'ircLineParser', 'irc-framework'),
      Transport: boundedTransport(commonJsExport(net, 'default', 'irc-framework')),
    })),
);
