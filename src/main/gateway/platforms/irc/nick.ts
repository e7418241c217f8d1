/**
 * Nicks: what to try when ours is taken, and whether a channel line speaks to us.
 */

/** After `nick_` and `nick__`, numbered nicks; enough tries for any crowded network. */
const MAX_ALTERNATIVES = 20;

/** The nick to try after `attempt` refusals (0 → the configured nick), or undefined when out of ideas. */
export function alternativeNick(nick: string, attempt: number): string | undefined {
  if (attempt === 0) return nick;
  if (attempt === 1) return `${nick}_`;
  if (attempt === 2) return `${nick}__`;
  if (attempt > MAX_ALTERNATIVES) return undefined;
  return `${nick}${attempt - 2}`;
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
