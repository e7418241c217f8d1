import { describe, expect, it } from 'vitest';
import { parseConfigText } from './load';
import { DEFAULT_CONFIG, homingConfigSchema } from './schema';

const parse = (text: string) => parseConfigText(text, homingConfigSchema, 'config.json');

describe('config.json', () => {
  it('is the embedded default when empty: the local chat and the built-in agent', () => {
    expect(parse('')).toEqual({ ok: true, value: DEFAULT_CONFIG });
    expect(parse('{}')).toEqual({ ok: true, value: DEFAULT_CONFIG });
    expect(DEFAULT_CONFIG.agent).toEqual({ type: 'builtin' });
    expect(DEFAULT_CONFIG.platforms).toEqual({});
    expect(DEFAULT_CONFIG.sessions.dmScope).toBe('per-platform-peer');
    expect(DEFAULT_CONFIG.delivery).toEqual({ maxAttempts: 5, staleHours: 24, retentionDays: 7, leaseSeconds: 30 });
    // An absent section and an empty one mean the same: one set of defaults.
    expect(parse('{"sessions":{},"delivery":{},"platforms":{}}')).toEqual(parse('{}'));
  });

  it('accepts IRC with Ollama', () => {
    const result = parse(
      JSON.stringify({
        agent: { type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' },
        platforms: { irc: { host: 'irc.libera.chat', nick: 'homing-bot', channels: ['#homing'], allow: ['ada'] } },
      }),
    );
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.platforms.irc).toMatchObject({ port: 6697, tls: true, enabled: true });
  });

  it.each([
    ['{ "agent": { "type": "openai", "model": "x" } }', /^config\.json: agent\.baseUrl: /],
    ['{ "agent": { "type": "telepathy" } }', /^config\.json: agent\.type: /],
    ['{ "maxConcurrentTurns": 0 }', /^config\.json: maxConcurrentTurns: Too small/],
    ['{ "platforms": { "irc": { "host": "h", "nick": "n", "password": "hunter2" } } }', /platforms\.irc\.password: passwords do not belong in config\.json/],
    ['{ "agent": { "type": "openai", "baseUrl": "http://x/v1", "model": "m", "apiKey": "sk-123" } }', /agent\.apiKey: API keys do not belong/],
    ['{ "sessions": { "dmScope": "everyone" } }', /^config\.json: sessions\.dmScope: /],
    ['{ "colour": "blue" }', /^config\.json: \(top level\): Unrecognized key: "colour"/],
    ['{ "platforms": { "irc": { "host": "h", "nick": "n", "channels": ["nohash"] } } }', /platforms\.irc\.channels\[0\]: must be a channel name/],
    ['{ "agent": ', /^config\.json: not valid JSON \(.*line 1, column 11\)$/],
    ['[1, 2]', /^config\.json: \(top level\): /],
  ])('rejects %s with a message that names the field', (text, message) => {
    const result = parse(text);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(message);
      expect(result.error).not.toMatch(/hunter2|sk-123/);
      expect(result.error.split('\n')).toHaveLength(1);
    }
  });
});
