import { describe, expect, it } from 'vitest';
import { homingConfigSchema } from '../homing-config';
import { createPseudonymiser } from '../session/pseudonyms';
import { matchRoute, routingSchema } from './routing';

const pseudonyms = createPseudonymiser(Buffer.alloc(32, 9));
const target = (platform: string, chat: string, sender?: string) => ({
  platform,
  chat: pseudonyms.chat(platform, chat),
  sender: sender === undefined ? undefined : pseudonyms.person(platform, sender),
});

describe('routing rules', () => {
  const rules = routingSchema.parse([
    { name: 'alice at work', match: { platform: 'irc', chat: '#work', sender: 'alice' }, agent: { model: 'big' } },
    { match: { platform: 'irc', chat: '#work' }, agent: { model: 'medium', systemPrompt: 'Be brief on {platform}.' } },
    { match: { platform: 'telegram' }, agent: { model: 'small' } },
  ]);

  it('match by platform, chat and sender, compared as pseudonyms; the first match wins', () => {
    expect(matchRoute(rules, target('irc', '#work', 'alice'), pseudonyms)).toEqual({ name: 'alice at work', model: 'big' });
    expect(matchRoute(rules, target('irc', '#work', 'bob'), pseudonyms)).toEqual({ name: 'rule 2', model: 'medium', systemPrompt: 'Be brief on {platform}.' });
    expect(matchRoute(rules, target('telegram', '#work', 'alice'), pseudonyms)).toEqual({ name: 'rule 3', model: 'small' });
    expect(matchRoute(rules, target('irc', '#home', 'alice'), pseudonyms)).toBeUndefined();
    // The same name on another platform is another chat.
    expect(matchRoute(rules.slice(0, 2), target('matrix', '#work', 'alice'), pseudonyms)).toBeUndefined();
  });

  it('are validated with the config: a chat or sender needs its platform, and unknown settings are refused', () => {
    expect(homingConfigSchema.safeParse({ routing: [{ match: { chat: '#work' }, agent: { model: 'x' } }] }).success).toBe(false);
    expect(homingConfigSchema.safeParse({ routing: [{ match: { platform: 'irc' }, agent: { apiKey: 'x' } }] }).success).toBe(false);
    expect(homingConfigSchema.parse({}).routing).toEqual([]);
  });
});
