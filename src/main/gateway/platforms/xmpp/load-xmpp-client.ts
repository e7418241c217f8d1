import { loadOnce } from '../../load-once';

/**
 * @xmpp/client, loaded when an XMPP connection (or its Test connection)
 * starts: with its SASL mechanisms and resolvers it takes ~13 MB of memory and
 * ~100 ms, which a gateway without XMPP should not pay at every start.
 */
export type XmppLibrary = typeof import('@xmpp/client');

export const loadXmppClient = loadOnce((): Promise<XmppLibrary> => import('@xmpp/client'));
