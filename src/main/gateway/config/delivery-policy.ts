import type { z } from 'zod';
import type { LedgerPolicy } from '../ledger';
import type { deliverySchema } from './schema';

/**
 * config.json's `delivery` section in the ledger's units. One mapping for the
 * gateway (at start and on every reload) and the CLI, so `homing sweep`
 * abandons by the same rules as the running gateway.
 */
export function ledgerPolicy(delivery: z.output<typeof deliverySchema>): Pick<LedgerPolicy, 'maxAttempts' | 'staleAfterMs' | 'retentionMs' | 'leaseMs'> {
  return {
    maxAttempts: delivery.maxAttempts,
    staleAfterMs: delivery.staleHours * 3600_000,
    retentionMs: delivery.retentionDays * 86_400_000,
    leaseMs: delivery.leaseSeconds * 1000,
  };
}
