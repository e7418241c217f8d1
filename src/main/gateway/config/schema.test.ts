import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPseudonymiser } from '../session/pseudonyms';
import { createSessionKeyBuilder } from '../session/session-key';
import { parseConfigText } from './load';
import { DEFAULT_CONFIG, homingConfigSchema } from '../homing-config';
import { identityLinksSchema } from './schema';

const parse = (text: string) => parseConfigText(text, homingConfigSchema, 'config.json');

describe('config.json', () => {
  it('is the embedded default when empty: the local chat and the built-in agent', () => {
    expect(parse('')).toEqual({ ok: true, value: DEFAULT_CONFIG });
    expect(parse('{}')).toEqual({ ok: true, value: DEFAULT_CONFIG });
    expect(DEFAULT_CONFIG.agent).toEqual({ type: 'builtin' });
    expect(DEFAULT_CONFIG.platforms).toEqual({});
    expect(DEFAULT_CONFIG.sessions.dmScope).toBe('per-platform-peer');
    expect(DEFAULT_CONFIG.delivery).toEqual({ maxAttempts: 5, staleHours: 24, retentionDays: 7, leaseSeconds: 30 });
    expect(DEFAULT_CONFIG.autoUpdate).toBe(true);
    // An absent section and an empty one mean the same: one set of defaults.
    expect(parse('{"sessions":{},"delivery":{},"platforms":{}}')).toEqual(parse('{}'));
  });

  it('turns the update check off with "autoUpdate": false', () => {
    expect(parse('{ "autoUpdate": false }')).toMatchObject({ ok: true, value: { autoUpdate: false } });
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
    ['{ "autoUpdate": "no" }', /^config\.json: autoUpdate: Invalid input: expected boolean, received string$/],
    ['{ "platforms": { "irc": { "host": "h", "nick": "n", "password": "hunter2" } } }', /platforms\.irc\.password: passwords do not belong in config\.json/],
    ['{ "agent": { "type": "openai", "baseUrl": "http://x/v1", "model": "m", "apiKey": "sk-123" } }', /agent\.apiKey: API keys do not belong/],
    ['{ "sessions": { "dmScope": "everyone" } }', /^config\.json: sessions\.dmScope: /],
    ['{ "colour": "blue" }', /^config\.json: \(top level\): Unrecognized key: "colour"/],
    ['{ "platforms": { "irc": { "host": "h", "nick": "n", "channels": ["nohash"] } } }', /platforms\.irc\.channels\[0\]: must be a channel name/],
    ['{ "agent": ', /^config\.json: not valid JSON \(.*line 1, column 11\)$/],
    ['[1, 2]', /^config\.json: \(top level\): /],
    ['{ "sessions": { "identityLinks": { "a": ["abc"] } } }', /^config\.json: sessions\.identityLinks\.a\[0\]: must look like "<platform>:<sender id>"/],
    ['{ "sessions": { "identityLinks": { "a": ["irc:"] } } }', /^config\.json: sessions\.identityLinks\.a\[0\]: must look like/],
    ['{ "sessions": { "identityLinks": { "a": [":alice"] } } }', /^config\.json: sessions\.identityLinks\.a\[0\]: must look like/],
    ['{ "sessions": { "identityLinks": { "alice": ["irc:x"], "bob": ["irc:x"] } } }', /^config\.json: sessions\.identityLinks\.bob\[0\]: "irc:x" is already linked to "alice"/],
    ['{ "sessions": { "identityLinks": { " ": ["irc:x"] } } }', /^config\.json: sessions\.identityLinks\. : a link name must be visible text/],
    ['{ "__proto__": { "maxConcurrentTurns": 64 } }', /^config\.json: __proto__: "__proto__" is not allowed as a key/],
    ['{ "agent": { "type": "command", "command": "x", "env": { "constructor": "1" } } }', /^config\.json: agent\.env\.constructor: "constructor" is not allowed/],
    [`{ "$schema": ${'['.repeat(20)}${']'.repeat(20)} }`, /^config\.json: \$schema(\[0\])+.*: nested more than 16 levels deep/],
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

describe('identityLinks', () => {
  const pseudonyms = createPseudonymiser(Buffer.alloc(32, 7));
  const entry = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.tuple(fc.constantFrom('irc', 'local', 'IRC', '', 'matrix'), fc.constantFrom(':', '::', ''), fc.string({ maxLength: 8 })).map((parts) => parts.join('')),
  );
  const links = fc.dictionary(fc.constantFrom('alice', 'bob', '', ' ', 'carol'), fc.array(entry, { maxLength: 4 }), { maxKeys: 4 });

  it('accepts exactly what the session router can index: nothing it passes stops the gateway', () => {
    fc.assert(
      fc.property(links, (value) => {
        const parsed = identityLinksSchema.safeParse(value);
        if (!parsed.success) return;
        expect(() => createSessionKeyBuilder({ pseudonyms, identityLinks: parsed.data })).not.toThrow();
      }),
      { numRuns: 2_000 },
    );
  });

  it('accepts one person on several platforms, ids with colons included', () => {
    expect(identityLinksSchema.safeParse({ alice: ['irc:alice', 'matrix:@alice:example.org', 'irc:alice'] }).success).toBe(true);
  });
});
