export { EMPTY_COUNTS, Ledger, type LedgerCounts, type LedgerOptions } from './ledger';
export { computeObligationId, computeChunkKey } from './obligation-id';
export { DEFAULT_POLICY, type LedgerPolicy } from './policy';
export type { Chunk, DeliveryTarget } from './rows';
export type { RecordInput, RecordResult, AttemptResult, ChunkResult, DeliveredResult, SendFailure, FailedResult } from './send-path';
export type { ClaimedObligation, DeliverablePlatform, SweepOutcome, SweepParams } from './sweep';
export type { ActionResult } from './operator-actions';
export { createSystemProbe, type ProcessProbe, type ProcessIdentity, type ProcessSighting } from './process-identity';
