import { splitPlainText } from '../chunking';

/** RFC 2812: a line is at most 512 bytes, the closing CR LF included. */
export const IRC_LINE_BYTES = 512;

/**
 * The longest `user@host` a server may put in our prefix when it relays a line: a
 * `~` plus a 10-byte user name, and a 63-byte host (HOSTLEN on common servers). We
 * do not know what the server shows for us (cloaks, IPv6), so we assume the worst.
 */
const WORST_USER = '~' + 'u'.repeat(10);
const WORST_HOST = 'h'.repeat(63);

/**
 * Bytes left for the text of a `PRIVMSG`/`NOTICE` once the server has prefixed it
 * with `:nick!user@host COMMAND target :` for the receivers: the line we send is
 * shorter than the one they get, and the server truncates the one they get.
 */
export function textBudget(nick: string, target: string, command: 'PRIVMSG' | 'NOTICE' = 'PRIVMSG'): number {
  const relayed = `:${nick}!${WORST_USER}@${WORST_HOST} ${command} ${target} :\r\n`;
  return IRC_LINE_BYTES - Buffer.byteLength(relayed, 'utf8');
}

/**
 * The protocol lines for a text: every line break starts a new line, blank lines
 * are dropped (IRC cannot send an empty message), each line is cut at spaces into
 * pieces of at most `budget` bytes without breaking a character, and characters
 * that would end or hijack a line (NUL, CR, the CTCP marker) are removed.
 */
export function toProtocolLines(text: string, budget: number): string[] {
  // eslint-disable-next-line no-control-regex -- these control characters are the point
  const clean = text.replace(/\r\n?/g, '\n').replace(/[\0\x01]/g, '');
  const lines: string[] = [];
  for (const line of clean.split('\n')) {
    if (line.trim() === '') continue;
    lines.push(...splitPlainText(line, { maxLength: budget, unit: 'bytes' }));
  }
  return lines;
}
