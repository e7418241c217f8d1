import type { DeliveryState } from '../../../shared/api';

export type ObligationState = DeliveryState;

/**
 * owed: not sent yet; sending: a send began and its outcome is unknown (it may
 * have arrived); delivered: the platform confirmed it.
 */
export type ChunkState = 'owed' | 'sending' | 'delivered';

/** States in which a reply is still owed to the user: never pruned, never size-capped. */
export function isOwed(state: ObligationState): boolean {
  switch (state) {
    case 'pending':
    case 'attempting':
    case 'failed':
      return true;
    case 'delivered':
    case 'abandoned':
      return false;
  }
}
