import { describe, expect, it } from 'vitest';
import { addressedText, alternativeNick, mentions, nickLengthFrom } from './nick';

describe('alternativeNick', () => {
  it('tries nick_, nick__, then numbered nicks, and gives up eventually', () => {
    expect([0, 1, 2, 3, 4].map((attempt) => alternativeNick('homing', attempt))).toEqual([
      'homing',
      'homing_',
      'homing__',
      'homing1',
      'homing2',
    ]);
    expect(alternativeNick('homing', 1_000)).toBeUndefined();
  });

  it('keeps every try within the server’s NICKLEN (ngircd’s default 9)', () => {
    const tries = [0, 1, 2, 3, 4, 8].map((attempt) => alternativeNick('homingbot', attempt, 9));
    expect(tries).toEqual(['homingbot', 'homingbo_', 'homingb__', 'homingbo1', 'homingbo2', 'homingbo6']);
    for (const nick of tries) expect(nick!.length).toBeLessThanOrEqual(9);
    expect(alternativeNick('homingbot', 9, 9)).toBeUndefined();
  });

  it('reads NICKLEN from an ISUPPORT line', () => {
    expect(nickLengthFrom(['homing', 'CHANTYPES=#&', 'NICKLEN=9', 'are supported by this server'])).toBe(9);
    expect(nickLengthFrom(['homing', 'CHANTYPES=#'])).toBeUndefined();
  });
});

describe('addressedText', () => {
  it('strips a `nick:` or `nick,` prefix, in any case', () => {
    expect(addressedText('homing: hello', ['homing'])).toBe('hello');
    expect(addressedText('Homing,hello there', ['homing'])).toBe('hello there');
    expect(addressedText('  homing :  spaced', ['homing'])).toBe('spaced');
  });

  it('accepts any of our nicks and nothing else', () => {
    expect(addressedText('homing_: hi', ['homing_', 'homing'])).toBe('hi');
    expect(addressedText('homing: hi', ['homing_', 'homing'])).toBe('hi');
    expect(addressedText('homingbird: hi', ['homing'])).toBeUndefined();
    expect(addressedText('hello homing: hi', ['homing'])).toBeUndefined();
    expect(addressedText('h.ming: hi', ['h[ming'])).toBeUndefined();
  });
});

describe('mentions', () => {
  it('finds our nick as a whole word', () => {
    expect(mentions('pokes homing', ['homing'])).toBe(true);
    expect(mentions('pokes homing_bot', ['homing'])).toBe(false);
    expect(mentions('waves', ['homing'])).toBe(false);
  });
});
