import { describe, expect, it } from 'vitest';
import type { ChaosFigures } from './analyze';
import { parseChaosArgs, type ChaosPlatformName } from './options';
import { runChaos } from './run';

/**
 * `npm run chaos -- --platform <name> --fast` as a test, one row per platform:
 * the built headless gateway SIGKILLed 3 times and its chat server taken away
 * once while 3 people send 40 numbered requests. Each platform has a small
 * entry file (test/chaos.<platform>.e2e.test.ts), so vitest's two workers share
 * the runs.
 *
 * Part of every `npm test` (and so of CI); HOMING_CHAOS=0 leaves them out.
 * Each runs one fixed seed so a failure can be replayed; HOMING_CHAOS_SEED picks
 * another (`npm run chaos -- --platform P --fast --seed S` runs the same outside vitest).
 */
interface ChaosSuite {
  /** The platform as the test names it. */
  readonly label: string;
  /** What the run does to it besides the kills. */
  readonly outage: string;
  /** The promise the run checks, as the test's name. */
  readonly promise: string;
  readonly seed: string;
  /** What must have reached Homing for the run to mean anything: every request, where the service keeps them for the bot. */
  reached(figures: ChaosFigures): void;
  /** Figures beyond the ones every platform must hold at zero. */
  readonly alsoZero: readonly ZeroFigure[];
  /** How long the run waits for what is owed after the last kill (default --fast's); the answers it checks are the same. */
  readonly drainTimeoutMs?: number;
  readonly timeoutMs: number;
}

type ZeroFigure = 'duplicateUserTurns' | 'repeatsMarked';

const MINUTES = 60_000;

const SUITES: Record<ChaosPlatformName, ChaosSuite> = {
  // A real ngircd, restarted once; 3 users in a channel and by DM. IRC keeps nothing for
  // an absent client, so only what reached Homing is owed an answer.
  irc: {
    label: 'IRC',
    outage: 'SIGKILLs, IRC server restarts',
    promise: 'answers every message that reached Homing, once or visibly marked, in order, with no orphan agents',
    seed: '2',
    reached: (f) => expect(f.reachedHoming, 'some requests must reach Homing for the run to mean anything').toBeGreaterThan(0),
    alsoZero: [],
    // IRC paces its lines (a burst of 4, then one each 400 ms): a long reply is ~28 lines, ~11 s,
    // and the last kill can leave four of them owed, with their marker lines: more than --fast's 45 s.
    drainTimeoutMs: 2 * MINUTES,
    timeoutMs: 5 * MINUTES,
  },
  // The fake Bot API taken away once; people in a group and by direct message. With
  // durable intake every request Telegram handed over must be answered.
  telegram: {
    label: 'Telegram',
    outage: 'SIGKILLs, the Bot API away',
    promise: 'answers every message Telegram handed over, once or visibly marked, in order, never taking one twice',
    seed: '2',
    reached: (f) => expect(f.handedToHoming, 'with durable intake every request is handed over').toBe(f.sent),
    alsoZero: ['duplicateUserTurns'],
    timeoutMs: 3 * MINUTES,
  },
  // The fake homeserver restarted once; people in a room and in direct chats. With txnIds
  // the server deduplicates every resend: no repeat at all, marked or not.
  matrix: {
    label: 'Matrix',
    outage: 'SIGKILLs, the homeserver restarted',
    promise: 'answers every message the homeserver held, exactly once and in order, never taking one twice',
    seed: '2',
    reached: (f) => expect(f.handedToHoming, 'with durable intake every request is handed over').toBe(f.sent),
    alsoZero: ['duplicateUserTurns', 'repeatsMarked'],
    timeoutMs: 3 * MINUTES,
  },
  // A real dovecot restarted once and the SMTP sink; people in two threads each. Mail
  // waits in the folder until it is read, so every request must be answered.
  email: {
    label: 'email',
    outage: 'SIGKILLs, dovecot restarted',
    promise: 'answers every message that reached the inbox, once or visibly marked, in order, never taking one twice',
    seed: '3',
    reached: (f) => expect(f.handedToHoming, 'every request reached the inbox').toBe(f.sent),
    alsoZero: ['duplicateUserTurns'],
    timeoutMs: 4 * MINUTES,
  },
  // The fake Discord (REST and Gateway, discord.js unchanged) taken away once; people in a
  // server channel and by direct message.
  discord: {
    label: 'Discord',
    outage: 'SIGKILLs, Discord away',
    promise: 'answers every message Discord handed over, once or visibly marked, in order, never taking one twice',
    seed: '2',
    reached: (f) => expect(f.handedToHoming, 'with durable intake every request is handed over').toBe(f.sent),
    alsoZero: ['duplicateUserTurns'],
    timeoutMs: 3 * MINUTES,
  },
  // The fake Slack (Web API and Socket Mode, Slack's own libraries unchanged) taken away once;
  // people in a channel and by direct message. chat.postMessage has no idempotency key, so a
  // resend after a kill may repeat a part: marked, never silent.
  slack: {
    label: 'Slack',
    outage: 'SIGKILLs, Slack away',
    promise: 'answers every message Slack handed over, once or visibly marked, in order, never taking one twice',
    seed: '2',
    reached: (f) => expect(f.handedToHoming, 'with durable intake every request is handed over').toBe(f.sent),
    alsoZero: ['duplicateUserTurns'],
    timeoutMs: 3 * MINUTES,
  },
  // The fake signal-cli daemon (manual receive mode, Signal's queue behind it) taken away once;
  // people in a group and by direct message. Each message is journaled the moment signal-cli
  // hands it over, so every request it handed over (bar the instant of a kill: signal-cli has no
  // client acknowledgement) must be answered; `send` has no idempotency key, so a part resent
  // after a kill is marked.
  signal: {
    label: 'Signal',
    outage: 'SIGKILLs, the signal-cli daemon restarted',
    promise: 'answers every message signal-cli handed over, once or visibly marked, in order, never taking one twice',
    seed: '2',
    // Signal's queue keeps every request for Homing: all reach it but, at most, one written in the instant of each kill or restart.
    reached: (f) => expect(f.reachedHoming, 'with manual receive mode every request reaches Homing').toBeGreaterThanOrEqual(f.sent - f.kills - 1),
    alsoZero: ['duplicateUserTurns'],
    timeoutMs: 3 * MINUTES,
  },
  // A real prosody of the run's own, restarted once; people in a room (addressing the bot
  // by nick) and one to one. A room message sent while the bot is out of the room never
  // reaches it: outside the promise, as on IRC.
  xmpp: {
    label: 'XMPP',
    outage: 'SIGKILLs, prosody restarted',
    promise: 'answers every message that reached Homing, once or visibly marked, in order, never taking one twice',
    seed: '2',
    reached: (f) => expect(f.reachedHoming, 'some requests must reach Homing for the run to mean anything').toBeGreaterThan(f.sent / 2),
    alsoZero: ['duplicateUserTurns'],
    timeoutMs: 3 * MINUTES,
  },
};

const enabled = process.env.HOMING_CHAOS !== '0';

export function defineChaosSuite(platform: ChaosPlatformName): void {
  const suite = SUITES[platform];
  describe.skipIf(!enabled)(`the gateway on ${suite.label} under chaos (${suite.outage})`, () => {
    it(
      suite.promise,
      async () => {
        const seed = process.env.HOMING_CHAOS_SEED ?? suite.seed;
        const drain = suite.drainTimeoutMs === undefined ? [] : ['--drain-timeout-ms', String(suite.drainTimeoutMs)];
        const options = parseChaosArgs(['--platform', platform, '--fast', '--seed', seed, ...drain]);
        const result = await runChaos(options, (line) => process.env.HOMING_TEST_LOG && console.error(line));
        console.log(result.report);
        const f = result.figures;
        suite.reached(f);
        expect(f.kills).toBe(options.kills);
        const zero = {
          lostBeforeSaved: f.lostBeforeSaved,
          lostAfterReaching: f.lostAfterReaching,
          repeatsUnmarked: f.repeatsUnmarked,
          misordered: f.misorderedWithinReply + f.misorderedAcrossReplies,
          misrouted: f.misrouted,
          deliverableAbandoned: f.deliverableAbandoned,
          orphans: f.orphans,
          ...Object.fromEntries(suite.alsoZero.map((figure) => [figure, f[figure]])),
        };
        const zeros = Object.fromEntries(Object.keys(zero).map((figure) => [figure, 0]));
        const kept = result.runDir ? `\nthe run's files (the gateway's log among them) are kept in ${result.runDir}` : '';
        expect(zero, `seed ${options.seed}:\n${result.report}${kept}`).toEqual(zeros);
        expect(result.verdict.ok).toBe(true);
      },
      suite.timeoutMs,
    );
  });
}
