import { describe, expect, it } from 'vitest';
import type { PairingOverview, PlatformStatus } from '../../../../shared/api';
import { addablePlatforms, describeAgent, hasPairing, isEnabled, listedPlatforms } from './platform-list';

const status = (name: string): PlatformStatus => ({ name, state: 'connected', error: null });

describe('the platforms Platforms lists', () => {
  it('lists none on a fresh config, and offers every one to add', () => {
    expect(listedPlatforms({ platforms: {} }, [], new Set())).toEqual([]);
    expect(addablePlatforms([])).toEqual(['telegram', 'matrix', 'discord', 'slack', 'signal', 'xmpp', 'irc', 'email']);
  });

  it('lists those config.json has (switched off too) and one being added, in the window’s order', () => {
    const config = { platforms: { email: { enabled: false }, irc: { host: 'h' }, telegram: {} } };
    // A platform still running after its removal (the overview lags behind) is not listed again.
    expect(listedPlatforms(config, [status('discord')], new Set(['matrix']))).toEqual(['telegram', 'matrix', 'irc', 'email']);
    expect(addablePlatforms(['telegram', 'matrix', 'irc', 'email'])).toEqual(['discord', 'slack', 'signal', 'xmpp']);
    // Before config.json is read: what the gateway runs.
    expect(listedPlatforms(null, [status('irc')], new Set())).toEqual(['irc']);
    expect(isEnabled(config, 'email')).toBe(false);
    expect(isEnabled(config, 'telegram')).toBe(true);
    expect(isEnabled(config, 'discord')).toBe(false);
  });

  it('shows requests only for a platform that has some', () => {
    const pairing: PairingOverview = {
      requests: [{ platform: 'telegram', code: 'ABC123', name: null, sender: 'user_0123456789ab', requestedAt: 1, told: true }],
      approved: [],
      denied: [{ platform: 'irc', name: null, sender: 'user_0123456789ab', at: 1 }],
      floods: [],
    };
    expect(hasPairing(pairing, 'telegram')).toBe(true);
    // A denial alone is nothing to show.
    expect(hasPairing(pairing, 'irc')).toBe(false);
    expect(hasPairing(null, 'telegram')).toBe(false);
  });
});

describe('the agent in a line', () => {
  it('names its kind and what it runs', () => {
    expect(describeAgent(undefined)).toMatch(/^The built-in agent/);
    expect(describeAgent({ type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' })).toBe('OpenAI-compatible server: llama3.2 at http://127.0.0.1:11434/v1');
    expect(describeAgent({ type: 'command', command: 'node', args: ['agent.mjs', '--fast'] })).toBe('A program run for each turn: node agent.mjs --fast');
  });
});
