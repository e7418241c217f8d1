export {
  EMPTY_COUNTS,
  Ledger,
  type ClaimResult,
  type FailedResult,
  type LedgerCounts,
  type LedgerOptions,
  type NextInLane,
  type Receipt,
  type RecordInput,
  type RecordResult,
  type SendFact,
  type SendFailure,
  type SendingResult,
  type WriteResult,
} from './ledger';
export { computeObligationId, computeChunkKey } from './obligation-id';
export { DEFAULT_POLICY, type LedgerPolicy } from './policy';
export type { Chunk, DeliveryTarget } from './rows';
export { OWED, isOwed } from './states';
export type { ClaimedObligation, DeliverablePlatform, SweepOutcome, SweepParams } from './sweep';
export type { ActionResult } from './operator-actions';
export { createSystemProbe, type ProcessProbe, type ProcessIdentity, type ProcessSighting } from './process-identity';
