import type { IntakeContract } from '../intake';

/** How Matrix hands messages over to Homing and how long it keeps them (the rules every adapter follows: ../intake.ts). */
export const matrixIntake = {
  kind: 'positional-catch-up',
  keeps: { kind: 'unbounded' },
  outage: 'The homeserver keeps the rooms\u2019 history: after any outage Homing reads everything it missed, page by page.',
} as const satisfies IntakeContract;
