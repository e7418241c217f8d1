import { loadOnce } from '../../load-once';

/**
 * grammY, loaded when a Telegram connection (or its Test connection) starts:
 * with node-fetch and its URL polyfills it takes ~17 MB of memory and ~50 ms,
 * which a gateway without Telegram should not pay at every start.
 */
export type Grammy = typeof import('grammy');

let loaded: Grammy | undefined;

export const loadGrammy = loadOnce((): Promise<Grammy> => import('grammy').then((grammy) => (loaded = grammy)));

/** grammY if it was loaded: an error can only be one of its errors once it was (send-errors.ts). */
export function loadedGrammy(): Grammy | undefined {
  return loaded;
}
