/**
 * Nicks: what to try when ours is taken, and whether a channel line speaks to us.
 */

/** After `nick_` and `nick__`, numbered nicks: a handful of tries, then the connection backs off. */
const MAX_ALTERNATIVES = 8;

/** RFC 1459's nick length, which servers that have not said otherwise (ngircd's default) enforce. */
export const RFC_NICKLEN = 9;

/**
 * The nick to try after `attempt` refusals (0 → the configured nick), or
 * undefined when out of ideas. With `maxLength` (the server's NICKLEN) the
 * nick is shortened to make room for the suffix, so every try can fit.
 */
export function alternativeNick(nick: string, attempt: number, maxLength = Infinity): string | undefined {
  if (attempt > MAX_ALTERNATIVES) return undefined;
  const suffix = attempt === 0 ? '' : attempt === 1 ? '_' : attempt === 2 ? '__' : String(attempt - 2);
  const room = Math.max(1, maxLength - suffix.length);
  return nick.slice(0, room) + suffix;
}

/** NICKLEN from an ISUPPORT (005) line's tokens, or undefined when it says none. */
export function nickLengthFrom(tokens: readonly string[]): number | undefined {
  for (const token of tokens) {
    const match = /^NICKLEN=(\d{1,3})$/i.exec(token);
    if (match) return Number(match[1]) > 0 ? Number(match[1]) : undefined;
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The text of a channel line addressed to one of `nicks` (`nick: text`, `nick, text`),
 * prefix stripped, or undefined if it is not addressed to us. Case-insensitive, since
 * IRC nicks are.
 */
export function addressedText(line: string, nicks: readonly string[]): string | undefined {
  for (const nick of nicks) {
    const match = new RegExp(`^\\s*${escapeRegExp(nick)}\\s*[:,]\\s*`, 'i').exec(line);
    if (match) return line.slice(match[0].length);
  }
  return undefined;
}

/** Whether an ACTION in a channel mentions us (`/me pokes homing`). */
export function mentions(line: string, nicks: readonly string[]): boolean {
  return nicks.some((nick) => new RegExp(`(^|[^\\w\\[\\]\\\\\`^{|}-])${escapeRegExp(nick)}($|[^\\w\\[\\]\\\\\`^{|}-])`, 'i').test(line));
}
