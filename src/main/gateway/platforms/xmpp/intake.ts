import type { IntakeContract } from '../intake';

/** How XMPP hands messages over to Homing and how long it keeps them (the rules every adapter follows: ../intake.ts). */
export const xmppIntake = {
  kind: 'positional-catch-up',
  keeps: { kind: 'unbounded' },
  roomsKeep: { kind: 'archive' },
  outage:
    'The server stores direct messages offline until Homing logs in. Room messages sent while Homing was away are read from the room\u2019s archive (XEP-0313) where the room keeps one, as far back as the archive goes; a room without an archive keeps nothing for Homing.',
} as const satisfies IntakeContract;
