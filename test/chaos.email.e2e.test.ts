import { describe, expect, it } from 'vitest';
import { parseChaosArgs } from './chaos/options';
import { runChaos } from './chaos/run';

/**
 * `npm run chaos -- --platform email --fast` (about a minute): the built
 * headless gateway on a real dovecot (IMAP) and the SMTP sink, SIGKILLed 3
 * times, dovecot restarted once, 40 numbered requests from 3 people in two
 * threads each. Mail waits in the folder until it is read, so every request
 * must be answered: nothing lost, no unmarked repeat, nothing out of order, no
 * user turn twice. HOMING_CHAOS=0 leaves it out; HOMING_CHAOS_SEED picks another seed.
 */
const enabled = process.env.HOMING_CHAOS !== '0';
const DEFAULT_SEED = '3';

describe.skipIf(!enabled)('the gateway on email under chaos (SIGKILLs, dovecot restarted)', () => {
  it('answers every message that reached the inbox, once or visibly marked, in order, never taking one twice', async () => {
    const seed = process.env.HOMING_CHAOS_SEED ?? DEFAULT_SEED;
    const options = parseChaosArgs(['--platform', 'email', '--fast', '--seed', seed]);
    const result = await runChaos(options, (line) => process.env.HOMING_TEST_LOG && console.error(line));
    console.log(result.report);
    const f = result.figures;
    expect(f.handedToHoming, 'every request reached the inbox').toBe(f.sent);
    expect(f.kills).toBe(options.kills);
    expect(
      {
        lostBeforeSaved: f.lostBeforeSaved,
        lostAfterReaching: f.lostAfterReaching,
        repeatsUnmarked: f.repeatsUnmarked,
        misordered: f.misorderedWithinReply + f.misorderedAcrossReplies,
        misrouted: f.misrouted,
        deliverableAbandoned: f.deliverableAbandoned,
        duplicateUserTurns: f.duplicateUserTurns,
        orphans: f.orphans,
      },
      `seed ${options.seed}:\n${result.report}`,
    ).toEqual({ lostBeforeSaved: 0, lostAfterReaching: 0, repeatsUnmarked: 0, misordered: 0, misrouted: 0, deliverableAbandoned: 0, duplicateUserTurns: 0, orphans: 0 });
    expect(result.verdict.ok).toBe(true);
  }, 240_000);
});
