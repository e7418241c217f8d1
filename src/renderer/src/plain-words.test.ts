import { describe, expect, it } from 'vitest';
import { errorWords } from './plain-words';

describe('errorWords', () => {
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
