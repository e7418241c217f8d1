import type { IrcAllowEntry } from './config-schema';

/**
 * Who may talk to the agent, by nick and by services account.
 *
 * A nick is only a name someone holds right now: on a network that does not
 * enforce registration, anyone can take an allowed nick while its owner is
 * away. An account is what the server says the sender logged in to (IRCv3
 * account-tag, extended-join + account-notify, WHOIS 330), which a stranger
 * cannot take. Entries that name an account match only when the server says
 * the sender is logged in to it.
 */

/** What the server said about a sender's account: its name, `null` for "not logged in", `undefined` for "not said". */
export type AccountFact = string | null | undefined;

export type AllowDecision = 'allowed' | 'refused' | 'ask-account';

interface Rule {
  readonly nick?: string;
  readonly account?: string;
}

export class Allowlist {
  private readonly rules: readonly Rule[];

  constructor(entries: readonly IrcAllowEntry[], requireAccount: boolean) {
    this.rules = entries.map((entry): Rule => {
      const rule = typeof entry === 'string' ? { nick: entry } : entry;
      // requireAccount: a nick stands for the account of the same name (Libera's habit).
      return requireAccount && rule.account === undefined && rule.nick !== undefined ? { nick: rule.nick, account: rule.nick } : rule;
    });
  }

  /**
   * Whether `nick` may talk to the agent. `ask-account` when only the account
   * can decide and the server has not said it yet: the caller asks (WHOIS) and
   * calls again with the answer, `null` included.
   */
  decide(nick: string, account: AccountFact, lower: (text: string) => string): AllowDecision {
    const candidates = this.rules.filter((rule) => rule.nick === undefined || lower(rule.nick) === lower(nick));
    if (candidates.length === 0) return 'refused';
    if (candidates.some((rule) => rule.account === undefined)) return 'allowed';
    if (account === undefined) return 'ask-account';
    if (account === null) return 'refused';
    return candidates.some((rule) => rule.account !== undefined && lower(rule.account) === lower(account)) ? 'allowed' : 'refused';
  }
}
