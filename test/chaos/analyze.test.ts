import { describe, expect, it } from 'vitest';
import { RESEND_MARKER } from '../../src/main/gateway/delivery/marker';
import { analyze, isMarkedRepeat, longestIncreasing, parseBotLine, type BotLine, type RunRecords, type SentRequest } from './analyze';

/** The chaos report's rules, on small hand-made streams (no servers, no processes). */

const CHANNEL = '#chaos';
const line = (text: string, at = 0): BotLine => ({ at, text });
const reply = (id: string, k: number, n: number, at = 0) => line(`${id} line ${k}/${n}${n === 1 ? ' ans' : ' the quick brown fox'}`, at);

function records(requests: SentRequest[], stream: BotLine[], extra: Partial<RunRecords> = {}): RunRecords {
  const ids = requests.map((request) => request.id);
  return {
    requests,
    streams: new Map([[CHANNEL, stream]]),
    handed: new Map(ids.map((id) => [id, 0])),
    handedOrder: new Map(ids.map((id, i) => [id, i])),
    reached: new Map(ids.map((id) => [id, 1])),
    kills: [],
    serverRestarts: 0,
    abandonedRows: [],
    failedRows: [],
    owedAtEnd: 0,
    observerGaps: 0,
    bootTimes: [],
    ...extra,
  };
}

const request = (id: string, lines = 1): SentRequest => ({ id, from: 'alice', conversation: CHANNEL, lines, sentAt: 0 });

describe('the chaos figures', () => {
  it('parses reply lines, the marker, notices naming a request, and anything else', () => {
    expect(parseBotLine('req-0007 line 3/12 the quick')).toEqual({ kind: 'reply', id: 'req-0007', index: 3, total: 12 });
    expect(parseBotLine(RESEND_MARKER)).toEqual({ kind: 'marker' });
    expect(parseBotLine('⚠ Homing stopped before it could answer your message “req-0007 long 12”.')).toEqual({ kind: 'notice', id: 'req-0007' });
    expect(parseBotLine('⚠ The agent failed: boom')).toEqual({ kind: 'other' });
  });

  it('counts a reply that arrived whole and once as answered exactly once', () => {
    const figures = analyze(records([request('req-0001', 3)], [reply('req-0001', 1, 3), reply('req-0001', 2, 3), reply('req-0001', 3, 3)]));
    expect(figures).toMatchObject({ answeredExactlyOnce: 1, lostAfterReaching: 0, repeatsMarked: 0, repeatsUnmarked: 0, misorderedWithinReply: 0 });
  });

  it('counts a repeat after the marker line as marked, and a repeat without it as unmarked', () => {
    const marked = [reply('req-0001', 1, 4), reply('req-0001', 2, 4), reply('req-0001', 3, 4), line(RESEND_MARKER), reply('req-0001', 3, 4), reply('req-0001', 4, 4)];
    expect(analyze(records([request('req-0001', 4)], marked))).toMatchObject({ answeredWithMarkedRepeats: 1, repeatsMarked: 1, repeatsUnmarked: 0 });

    const unmarked = [reply('req-0001', 1, 2), reply('req-0001', 2, 2), reply('req-0001', 1, 2), reply('req-0001', 2, 2)];
    expect(analyze(records([request('req-0001', 2)], unmarked))).toMatchObject({ answeredWithUnmarkedRepeats: 1, repeatsUnmarked: 2 });
  });

  it('does not let a marker vouch for a repeat that comes after another reply', () => {
    const stream = [reply('req-0001', 1, 1), line(RESEND_MARKER), reply('req-0002', 1, 1), reply('req-0001', 1, 1)];
    const parsed = stream.map((one) => parseBotLine(one.text));
    expect(isMarkedRepeat(parsed, 3)).toBe(false);
    expect(analyze(records([request('req-0001'), request('req-0002')], stream)).repeatsUnmarked).toBe(1);
  });

  it('counts a request that reached Homing and is missing a line as lost (partly answered), and a notice as told', () => {
    const figures = analyze(
      records(
        [request('req-0001', 3), request('req-0002'), request('req-0003')],
        [reply('req-0001', 1, 3), reply('req-0001', 3, 3), line('⚠ Homing stopped before it could answer your message “req-0002”.')],
      ),
    );
    expect(figures).toMatchObject({ lostAfterReaching: 2, lostPartly: 1, told: 1 });
  });

  it('counts a request handed to Homing but in no transcript as lost before saved, and one never handed as outside the promise', () => {
    const figures = analyze(
      records([request('req-0001'), request('req-0002')], [], { reached: new Map(), handed: new Map([['req-0001', 0]]) }),
    );
    expect(figures).toMatchObject({ lostBeforeSaved: 1, lostAfterReaching: 0, handedToHoming: 1, reachedHoming: 0 });
  });

  it('counts lines of a reply out of order, and replies that overtook an earlier request', () => {
    const within = [reply('req-0001', 2, 2), reply('req-0001', 1, 2)];
    expect(analyze(records([request('req-0001', 2)], within)).misorderedWithinReply).toBe(1);

    // req-0001 was handed first but answered last: one reply out of place, not two.
    const across = [reply('req-0002', 1, 1), reply('req-0003', 1, 1), reply('req-0001', 1, 1)];
    expect(analyze(records([request('req-0001'), request('req-0002'), request('req-0003')], across)).misorderedAcrossReplies).toBe(1);
  });

  it('counts a reply that arrived in another conversation as misrouted', () => {
    const figures = analyze(records([{ ...request('req-0001'), conversation: 'alice' }], [reply('req-0001', 1, 1)]));
    expect(figures.misrouted).toBe(1);
  });

  it('measures takeover from the restart to the first line of a reply owed at the kill, and censors it at the next kill', () => {
    const requests = [request('req-0001', 2), request('req-0002')];
    const stream = [reply('req-0001', 1, 2, 900), reply('req-0001', 2, 2, 3_500), reply('req-0002', 1, 1, 4_000)];
    const handed = new Map([
      ['req-0001', 100],
      ['req-0002', 200],
    ]);
    const measured = analyze(records(requests, stream, { handed, kills: [{ at: 1_000, kind: 'random', restartedAt: 1_500, orphans: 0 }] }));
    expect(measured.takeover).toEqual({ samples: [2_000], censored: [], allStarted: [2_500] });

    const killedAgain = analyze(
      records(requests, stream, {
        handed,
        kills: [
          { at: 1_000, kind: 'random', restartedAt: 1_500, orphans: 2 },
          { at: 3_000, kind: 'mid-sweep', restartedAt: 3_200, orphans: 0 },
        ],
      }),
    );
    expect(killedAgain.takeover).toEqual({ samples: [300], censored: [1_500], allStarted: [800] });
    expect(killedAgain.orphans).toBe(2);
  });

  it('finds one longest increasing subsequence', () => {
    expect([...longestIncreasing([3, 1, 2, 5, 4])].sort()).toHaveLength(3);
    expect(longestIncreasing([]).size).toBe(0);
  });
});
