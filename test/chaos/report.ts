import { median, type ChaosFigures } from './analyze';

export interface Verdict {
  readonly ok: boolean;
  /** The figures that broke the promise, by their report name. */
  readonly failed: readonly string[];
}

/**
 * The promise, as figures: nothing that reached Homing lost (before or after it
 * was saved), no unmarked repeat, nothing out of order or misrouted, nothing
 * deliverable given up on, no agent left running 3 s after a kill, and, when a
 * bound is given, every takeover after a restart within it.
 */
export function verdict(figures: ChaosFigures, maxTakeoverMs?: number): Verdict {
  const failed: string[] = [];
  if (figures.lostBeforeSaved > 0) failed.push('lost before saved');
  if (figures.lostAfterReaching > 0) failed.push('lost after reaching Homing');
  if (figures.repeatsUnmarked > 0) failed.push('repeats unmarked');
  if (figures.misorderedWithinReply + figures.misorderedAcrossReplies > 0) failed.push('misordered');
  if (figures.misrouted > 0) failed.push('misrouted');
  if (figures.deliverableAbandoned > 0) failed.push('deliverable abandoned');
  if (figures.orphans > 0) failed.push('orphan agents');
  if (maxTakeoverMs !== undefined) {
    const worst = Math.max(0, ...figures.takeover.samples, ...figures.takeover.censored);
    if (worst > maxTakeoverMs) failed.push('takeover');
  }
  return { ok: failed.length === 0, failed };
}

const seconds = (ms: number | undefined) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`);

/** The report, one figure per line; a failing figure is marked ✗. */
export function formatReport(figures: ChaosFigures, result: Verdict, header: string): string {
  const bad = new Set(result.failed);
  const rows: [string, string, string?][] = [
    ['sent', `${figures.sent}`],
    ['handed to Homing by the platform', `${figures.handedToHoming}`],
    ['reached Homing (user turn saved)', `${figures.reachedHoming}`],
    ['lost before saved', `${figures.lostBeforeSaved}`, 'lost before saved'],
    ['answered exactly once', `${figures.answeredExactlyOnce}`],
    ['answered, repeats marked', `${figures.answeredWithMarkedRepeats}`],
    ['answered, repeats unmarked', `${figures.answeredWithUnmarkedRepeats}`],
    ['told to send again', `${figures.told}`],
    ['lost after reaching Homing', `${figures.lostAfterReaching} (partly answered ${figures.lostPartly})`, 'lost after reaching Homing'],
    ['repeats marked (lines)', `${figures.repeatsMarked}`],
    ['repeats unmarked (lines)', `${figures.repeatsUnmarked}`, 'repeats unmarked'],
    ['misordered', `${figures.misorderedWithinReply + figures.misorderedAcrossReplies} (within a reply ${figures.misorderedWithinReply}, across replies ${figures.misorderedAcrossReplies})`, 'misordered'],
    ['misrouted', `${figures.misrouted}`, 'misrouted'],
    ['abandoned', `${figures.abandoned} (+ failed for good ${figures.failedForGood}; deliverable ${figures.deliverableAbandoned})`, 'deliverable abandoned'],
    ['still owed after the drain', `${figures.owedAtEnd}`],
    [
      'takeover after restart (max / median)',
      `${seconds(figures.takeover.samples.length ? Math.max(...figures.takeover.samples) : undefined)} / ${seconds(median(figures.takeover.samples))} over ${figures.takeover.samples.length} restarts` +
        (figures.takeover.censored.length
          ? `; ${figures.takeover.censored.length} killed again before any owed line (> ${seconds(Math.max(...figures.takeover.censored))})`
          : ''),
      'takeover',
    ],
    ['every owed reply flowing (max / median)', `${seconds(figures.takeover.allStarted.length ? Math.max(...figures.takeover.allStarted) : undefined)} / ${seconds(median(figures.takeover.allStarted))}`],
    [
      'unanswered messages flowing (max / median)',
      `${seconds(figures.messagesFlowing.samples.length ? Math.max(...figures.messagesFlowing.samples) : undefined)} / ${seconds(median(figures.messagesFlowing.samples))} (their agent turns re-run first)`,
    ],
    ['gateway start, spawn to URL (max / median)', `${seconds(figures.bootTimes.length ? Math.max(...figures.bootTimes) : undefined)} / ${seconds(median(figures.bootTimes))}`],
    ['orphan agents alive 3 s after a kill', `${figures.orphans}`, 'orphan agents'],
    ['kills / server restarts', `${figures.kills} / ${figures.serverRestarts}`],
    ['duplicate user turns', `${figures.duplicateUserTurns}`],
    ['other bot lines', `${figures.otherBotLines}`],
    ['observer gaps while the bot was up', `${figures.observerGaps}`],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const lines = [header];
  for (const [name, value, figure] of rows) lines.push(`${name.padEnd(width)}  ${value}${figure && bad.has(figure) ? '  ✗' : ''}`);
  for (const [figure, ids] of Object.entries(figures.examples)) {
    if (ids.length > 0 && bad.has(figure)) lines.push(`  e.g. ${figure}: ${ids.join(', ')}`);
  }
  lines.push(result.ok ? 'result: PASS' : `result: FAIL — ${result.failed.join(', ')}`);
  return lines.join('\n');
}
