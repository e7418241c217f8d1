import { describe, expect, it } from 'vitest';
import { errorWords, explainPlatform, platformLabel, updateWords } from './plain-words';

describe('errorWords', () => {
  it('does not take a blocked bot for a busy database', () => {
    expect(errorWords('permanent: the person blocked the bot')).not.toContain('database');
    expect(errorWords('SqliteError: database is locked')).toBe('the database was busy.');
  });

  it('names the person who is offline from the IRC adapter’s 401, not a word of the server’s text', () => {
    expect(errorWords('alice is not online: 401 alice No such nick or channel name')).toBe('alice is not online, so IRC cannot deliver it.');
  });

  it('still reads the older "no such nick: <nick>" form, and a bare one', () => {
    expect(errorWords('permanent: no such nick: bob is not online')).toBe('bob is not online, so IRC cannot deliver it.');
    expect(errorWords('No such nick')).toBe('the recipient is not online, so IRC cannot deliver it.');
  });

  it('says where nothing answers when the server is down', () => {
    expect(errorWords('connect ECONNREFUSED 127.0.0.1:6667')).toBe('nothing answers at 127.0.0.1:6667 (is the server running?).');
  });
});

describe('explainPlatform', () => {
  it('tells a Matrix login failure as what to do: store a new access token (or check the password)', () => {
    const words = explainPlatform({ name: 'matrix', state: 'auth-failed', error: 'the homeserver refused the access token (401 M_UNKNOWN_TOKEN)' });
    expect(words).toMatch(/^the homeserver refused the login: store a new access token .* in Platforms → Matrix\./);
    expect(words).toContain('M_UNKNOWN_TOKEN');
    expect(platformLabel('matrix')).toBe('Matrix');
  });
});

describe('updateWords', () => {
  const url = 'https://github.com/homing-app/homing/releases/tag/v0.3.0';

  it('only tells in headless mode, and says when the tray app installs', () => {
    expect(updateWords({ version: '0.3.0', url })).toBe('Homing v0.3.0 is available');
    expect(updateWords({ version: '0.3.0', url, ready: false })).toBe('Homing v0.3.0 is available: it is downloading, and is installed when Homing restarts.');
    expect(updateWords({ version: '0.3.0', url, ready: true })).toMatch(/^Homing v0\.3\.0 is ready: it is installed when Homing restarts \(Restart to update in the tray menu/);
  });
});
