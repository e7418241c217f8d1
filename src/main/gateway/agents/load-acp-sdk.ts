import { loadOnce } from '../load-once';

/**
 * The Agent Client Protocol SDK, loaded when an ACP agent first takes a turn:
 * ~7 MB of memory and ~40 ms that a gateway answering with another agent
 * should not pay at every start.
 */
export type AcpSdk = typeof import('@agentclientprotocol/sdk');

export const loadAcpSdk = loadOnce((): Promise<AcpSdk> => import('@agentclientprotocol/sdk'));
