import { describe, expect, it } from 'vitest';
import { CourtesyBudget } from './courtesy-budget';

describe('CourtesyBudget', () => {
  it('gives each sender one line per interval and everyone together a capped number per window', () => {
    let now = 0;
    const budget = new CourtesyBudget({ perSenderMs: 60_000, overall: 3, windowMs: 10_000 }, () => now);
    expect(budget.take('a')).toBe(true);
    expect(budget.take('a')).toBe(false);
    expect(budget.take('b')).toBe(true);
    expect(budget.take('c')).toBe(true);
    expect(budget.take('d')).toBe(false); // the window is full
    now = 10_000;
    expect(budget.take('d')).toBe(true);
    expect(budget.take('a')).toBe(false); // still inside its own minute
    now = 60_000;
    expect(budget.take('a')).toBe(true);
  });

  it('spends pairing codes from the shared budget only, and says when it frees', () => {
    let now = 0;
    const budget = new CourtesyBudget({ perSenderMs: 60_000, overall: 2, windowMs: 10_000 }, () => now);
    expect(budget.take('a')).toBe(true);
    expect(budget.sharedWaitMs()).toBe(0);
    expect(budget.takeShared()).toBe(true);
    expect(budget.takeShared()).toBe(false);
    expect(budget.take('b')).toBe(false); // the codes count against the courtesy lines too
    now = 4_000;
    expect(budget.sharedWaitMs()).toBe(6_000);
    now = 10_000;
    expect(budget.takeShared()).toBe(true);
  });

  it('remembers a bounded number of senders', () => {
    let now = 0;
    const budget = new CourtesyBudget({ perSenderMs: 1_000_000, overall: 1_000_000, windowMs: 1 }, () => now);
    for (let index = 0; index < 5_000; index++) {
      now += 1;
      expect(budget.take(`nick${index}`)).toBe(true);
    }
    // The first sender was pruned, so it may be answered again; a recent one may not.
    expect(budget.take('nick0')).toBe(true);
    expect(budget.take('nick4999')).toBe(false);
  });
});
