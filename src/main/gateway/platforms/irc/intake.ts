import type { IntakeContract } from '../intake';

/** How IRC hands messages over to Homing and how long it keeps them (the rules every adapter follows: ../intake.ts). */
export const ircIntake = {
  kind: 'push-only',
  keeps: { kind: 'none' },
  outage: 'IRC keeps nothing for Homing: a line sent while Homing is not connected is never seen.',
} as const satisfies IntakeContract;
