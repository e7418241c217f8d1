import { describe, expect, it } from 'vitest';
import { clipLength, fileSize } from './format';

describe('fileSize', () => {
  it('says sizes in decimal units, with one decimal only while it tells something', () => {
    expect(fileSize(0)).toBe('0 bytes');
    expect(fileSize(1)).toBe('1 byte');
    expect(fileSize(999)).toBe('999 bytes');
    expect(fileSize(1000)).toBe('1 kB');
    expect(fileSize(3_450)).toBe('3.5 kB');
    expect(fileSize(1_234_567)).toBe('1.2 MB');
    expect(fileSize(9_960_000)).toBe('10 MB');
    expect(fileSize(20_000_000)).toBe('20 MB');
    expect(fileSize(999_999)).toBe('1 MB');
    expect(fileSize(2_500_000_000)).toBe('2.5 GB');
  });
});

describe('clipLength', () => {
  it('reads like a player: minutes and seconds, hours when there are any', () => {
    expect(clipLength(7)).toBe('0:07');
    expect(clipLength(165.4)).toBe('2:45');
    expect(clipLength(3723)).toBe('1:02:03');
  });
});
