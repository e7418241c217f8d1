/** How docs/platforms.md writes the intake contract ("What an outage can cost"), row by row. */
import { platformTitle } from '../../src/shared/platforms';
import type { HistoryWindow, IntakeContract, IntakeKind } from '../../src/main/gateway/platforms/intake';

/** The docs' words for a contract's parts. */
const KIND_WORDS: Record<IntakeKind, string> = {
  'confirmed-cursor': 'kept until Homing confirms it',
  'positional-catch-up': 'read from where Homing left off',
  'push-only': 'only while Homing is connected',
};

function keptWords(window: HistoryWindow): string {
  switch (window.kind) {
    case 'unbounded':
      return 'for good';
    case 'for':
      return `${window.ms / 3_600_000} hours`;
    case 'archive':
      return 'as long as the archive keeps it';
    case 'none':
      return 'nothing';
  }
}

/** One row of docs/platforms.md's "What an outage can cost" table. */
export function intakeRow(platform: string, contract: IntakeContract): string {
  const kept = contract.roomsKeep ? `direct: ${keptWords(contract.keeps)}; rooms: ${keptWords(contract.roomsKeep)}` : keptWords(contract.keeps);
  return `| ${platformTitle(platform)} | ${KIND_WORDS[contract.kind]} | ${kept} | ${contract.outage} |`;
}
