import { describe, expect, it } from 'vitest';
import { IRC_LINE_BYTES, textBudget, toProtocolLines } from './lines';

describe('IRC protocol lines', () => {
  it('leaves room for the prefix the server adds when it relays our line', () => {
    const budget = textBudget('homing', '#homing');
    const worstRelayed = `:homing!~uuuuuuuuuu@${'h'.repeat(63)} PRIVMSG #homing :${'x'.repeat(budget)}\r\n`;
    expect(Buffer.byteLength(worstRelayed)).toBe(IRC_LINE_BYTES);
    expect(textBudget('a-much-longer-nick', '#homing')).toBeLessThan(budget);
  });

  it('makes every line break its own line and drops blank lines', () => {
    expect(toProtocolLines('one\r\ntwo\n\n  \nthree\rfour', 400)).toEqual(['one', 'two', 'three', 'four']);
  });

  it('removes NUL and the CTCP marker so a reply cannot become a CTCP or end a line early', () => {
    expect(toProtocolLines('\x01VERSION\x01 a\0b', 400)).toEqual(['VERSION ab']);
  });

  it('cuts a long line at spaces within the byte budget, never inside a character', () => {
    const line = Array.from({ length: 80 }, (_, i) => `wörd${i}€`).join(' ');
    const pieces = toProtocolLines(line, 50);
    for (const piece of pieces) expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(50);
    expect(pieces.join(' ')).toBe(line);
    const emoji = '😀'.repeat(30);
    const emojiPieces = toProtocolLines(emoji, 10);
    expect(emojiPieces.every((piece) => piece === '😀😀')).toBe(true);
    expect(emojiPieces.join('')).toBe(emoji);
  });

  it('keeps a code line indented', () => {
    expect(toProtocolLines('```\n    indented();\n```', 400)).toEqual(['```', '    indented();', '```']);
  });
});
