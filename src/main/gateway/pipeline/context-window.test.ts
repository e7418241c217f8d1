import { describe, expect, it } from 'vitest';
import type { ConversationContext } from '../agents/agent';
import { SHORTEN_SUMMARY_REQUEST, SUMMARISE_REQUEST } from '../agents/system-prompt';
import { estimateMessageTokens, type ModelFamily } from '../agents/token-estimate';
import { clipMessage, messageTokens, sharesOf, systemTokens, withinSystemShare, type Accounting } from './context-window';

const FAMILIES: ModelFamily[] = ['gpt', 'claude', 'llama', 'mistral', 'qwen', 'gemma', 'other'];

const context: ConversationContext = {
  platform: 'telegram',
  chatKind: 'group',
  chat: 'telegram:0123456789ab',
  chatTitle: 'Tea Club',
  sender: { pseudonym: 'user_0123456789ab', displayName: 'Ada' },
  localTime: '2026-12-02 01:13 (Wednesday)',
  timeZone: 'Europe/Berlin (UTC+01:00)',
};

describe('the shares of the context budget', () => {
  it('leave a summarise request room for a summary and one whole message, from the smallest budget up, in every family', () => {
    for (const family of FAMILIES) {
      for (const budget of [500, 501, 777, 1000, 8000]) {
        const shares = sharesOf(budget, family);
        const ask = Math.max(estimateMessageTokens(SUMMARISE_REQUEST, family), estimateMessageTokens(SHORTEN_SUMMARY_REQUEST, family));
        expect(shares.system + shares.summary + shares.message + ask).toBeLessThanOrEqual(budget);
        // Enough for a speaker and the line that says a message was cut, with text to spare.
        expect(shares.message).toBeGreaterThanOrEqual(60);
      }
    }
  });

  it('take a system message over its share out of the message share', () => {
    const shares = sharesOf(1000, 'gpt', 600);
    expect(shares.system).toBe(600);
    expect(shares.system + shares.summary + shares.message + estimateMessageTokens(SUMMARISE_REQUEST, 'gpt')).toBeLessThanOrEqual(1000);
  });
});

describe('a message longer than its share', () => {
  const accounting: Accounting = { context, family: 'other' };
  const long = { role: 'user' as const, text: 'tea '.repeat(2000), sender: { pseudonym: 'user_0123456789ab', displayName: 'Ada' } };

  it('is cut to fit, with a line saying how much the agent is shown', () => {
    const cut = clipMessage(long, accounting, 120);
    expect(messageTokens(cut, accounting)).toBeLessThanOrEqual(120);
    expect(cut.text).toMatch(/^tea tea[\s\S]*\n\[Homing: this message was cut to fit the context budget: \d+ of 8000 characters shown\]$/);
    expect(cut.sender).toEqual(long.sender);
  });

  it('is cut the same way every time, and a message within its share is left whole', () => {
    expect(clipMessage(long, accounting, 120)).toEqual(clipMessage({ ...long }, accounting, 120));
    const short = { role: 'assistant' as const, text: 'a short answer' };
    expect(clipMessage(short, accounting, 120)).toBe(short);
  });
});

describe("the owner's instructions", () => {
  it('are cut, saying so, when the system message would be over its share', () => {
    const accounting: Accounting = { context: { ...context, instructions: 'Always answer in haiku. '.repeat(500) }, family: 'gpt' };
    const shares = sharesOf(1000, 'gpt');
    const cut = withinSystemShare(accounting, shares);
    expect(cut.instructions).toMatch(/^Always answer in haiku\.[\s\S]*\[Homing: these instructions were cut to fit the context budget: \d+ of 12000 characters shown\]$/);
    expect(systemTokens({ ...accounting, context: cut })).toBeLessThanOrEqual(shares.system);
    const fits = { ...context, instructions: 'Be brief.' };
    expect(withinSystemShare({ context: fits, family: 'gpt' }, shares)).toBe(fits);
  });
});
