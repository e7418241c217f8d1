import type { IntakeContract } from '../intake';

/**
 * How Slack hands messages over to Homing and how long it keeps them (the rules
 * every adapter follows: ../intake.ts). Socket Mode re-sends an event that was
 * not acknowledged within 3 s a few times over minutes and then drops it, so
 * the events alone are not enough: after every (re)connect the adapter reads
 * each conversation's history after its saved position.
 */
export const slackIntake = {
  kind: 'positional-catch-up',
  keeps: { kind: 'unbounded' },
  outage:
    'Slack keeps every conversation\u2019s history (a free workspace shows the last 90 days): after any outage Homing reads everything it missed in the channels, threads and direct messages it answers in, page by page. A thread it never answered in, under a message older than its position, is not read.',
} as const satisfies IntakeContract;
