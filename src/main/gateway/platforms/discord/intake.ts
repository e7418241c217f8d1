import type { IntakeContract } from '../intake';

/** How Discord hands messages over to Homing and how long it keeps them (the rules every adapter follows: ../intake.ts). */
export const discordIntake = {
  kind: 'positional-catch-up',
  keeps: { kind: 'unbounded' },
  outage: 'Discord keeps every channel\u2019s history: after any outage Homing reads everything it missed in the channels it answers in, page by page.',
} as const satisfies IntakeContract;
