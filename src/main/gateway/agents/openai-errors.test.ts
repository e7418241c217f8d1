import { describe, expect, it } from 'vitest';
import { serverMessage } from './openai-errors';

const apiKey = 'sk-proj-' + 'a1b2c3d4'.repeat(6);

describe("a server's error message", () => {
  it('never shows the API key, not even part of it when the key straddles the 300-character cut', () => {
    for (let offset = 250; offset < 300; offset++) {
      const body = JSON.stringify({ error: { message: `${'x'.repeat(offset)}Incorrect API key provided: ${apiKey}.` } });
      const shown = serverMessage(body, { apiKey });
      expect(shown.length).toBeLessThanOrEqual(300);
      // Any 8 characters of the key would be a leak.
      for (let start = 0; start + 8 <= apiKey.length; start++) expect(shown).not.toContain(apiKey.slice(start, start + 8));
    }
  });

  it('keeps the message itself, with the key replaced', () => {
    expect(serverMessage(JSON.stringify({ error: `Incorrect API key provided: ${apiKey}` }), { apiKey })).toBe('Incorrect API key provided: [redacted]');
  });
});
