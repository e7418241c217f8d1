import { describe, expect, it } from 'vitest';
import { parseChaosArgs } from './chaos/options';
import { runChaos } from './chaos/run';

/**
 * `npm run chaos -- --platform matrix --fast` (about a minute): the built
 * headless gateway on the fake homeserver, SIGKILLed 3 times, the homeserver
 * restarted once, 40 numbered requests from 3 people in a room and in direct
 * chats. With durable intake every request the server held must be answered,
 * and with txnIds the server deduplicates every resend: nothing lost, no repeat
 * at all (marked or not), nothing out of order, no user turn twice.
 * HOMING_CHAOS=0 leaves it out; HOMING_CHAOS_SEED picks another seed.
 */
const enabled = process.env.HOMING_CHAOS !== '0';
const DEFAULT_SEED = '2';

describe.skipIf(!enabled)('the gateway on Matrix under chaos (SIGKILLs, the homeserver restarted)', () => {
  it('answers every message the homeserver held, exactly once and in order, never taking one twice', async () => {
    const seed = process.env.HOMING_CHAOS_SEED ?? DEFAULT_SEED;
    const options = parseChaosArgs(['--platform', 'matrix', '--fast', '--seed', seed]);
    const result = await runChaos(options, (line) => process.env.HOMING_TEST_LOG && console.error(line));
    console.log(result.report);
    const f = result.figures;
    expect(f.handedToHoming, 'with durable intake every request is handed over').toBe(f.sent);
    expect(f.kills).toBe(options.kills);
    expect(
      {
        lostBeforeSaved: f.lostBeforeSaved,
        lostAfterReaching: f.lostAfterReaching,
        repeatsUnmarked: f.repeatsUnmarked,
        repeatsMarked: f.repeatsMarked,
        misordered: f.misorderedWithinReply + f.misorderedAcrossReplies,
        misrouted: f.misrouted,
        deliverableAbandoned: f.deliverableAbandoned,
        duplicateUserTurns: f.duplicateUserTurns,
        orphans: f.orphans,
      },
      `seed ${options.seed}:\n${result.report}`,
    ).toEqual({ lostBeforeSaved: 0, lostAfterReaching: 0, repeatsUnmarked: 0, repeatsMarked: 0, misordered: 0, misrouted: 0, deliverableAbandoned: 0, duplicateUserTurns: 0, orphans: 0 });
    expect(result.verdict.ok).toBe(true);
  }, 180_000);
});
