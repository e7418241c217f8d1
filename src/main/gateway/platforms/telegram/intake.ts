import type { IntakeContract } from '../intake';

const DAY_MS = 24 * 60 * 60 * 1000;

/** How Telegram hands messages over to Homing and how long it keeps them (the rules every adapter follows: ../intake.ts). */
export const telegramIntake = {
  kind: 'confirmed-cursor',
  // telegram-bot-api keeps an update until it is confirmed or 24 hours after its message's date,
  // whichever comes first (Client::add_message_update: the update's timeout is date + 86 400 s - now).
  // The adapter tells an absence longer than this once (intake-gap).
  keeps: { kind: 'for', ms: DAY_MS },
  outage:
    'Telegram keeps a message for Homing for 24 hours. An outage shorter than that costs nothing; after a longer one, what was sent more than 24 hours before Homing came back is gone, and Homing says so once.',
} as const satisfies IntakeContract;
