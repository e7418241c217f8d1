import type { IntakeContract } from '../intake';

/** How email hands messages over to Homing and how long it keeps them (the rules every adapter follows: ../intake.ts). */
export const emailIntake = {
  kind: 'positional-catch-up',
  keeps: { kind: 'unbounded' },
  outage: 'The mailbox keeps the mail: after any outage Homing reads every message that arrived since the last one it saved.',
} as const satisfies IntakeContract;
