import type { DeliveryState } from '../../../shared/api';

export type ObligationState = DeliveryState;

/**
 * owed: not sent yet; sending: a send began and its outcome is unknown (it may
 * have arrived); delivered: the platform confirmed it.
 */
export type ChunkState = 'owed' | 'sending' | 'delivered';
