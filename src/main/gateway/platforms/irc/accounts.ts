/**
 * Which account each nick we share a channel with is logged in to, as the server
 * announces it: IRCv3 extended-join says it on JOIN, account-notify on every
 * login and logout after. Only both together keep it current, so the book is
 * trusted only when the server enabled both; otherwise (and for a nick the book
 * does not hold) the adapter asks with WHOIS.
 *
 * Forgetting is the safe direction: a nick that leaves, is kicked, quits or is
 * renamed away is dropped, and the next message from it is looked up afresh.
 */
export class AccountBook {
  private readonly accounts = new Map<string, string | null>();

  constructor(private readonly lower: (text: string) => string) {}

  /** `*` or an empty account means "not logged in". */
  set(nick: string, account: string): void {
    this.accounts.set(this.lower(nick), account === '*' || account === '' ? null : account);
  }

  renamed(from: string, to: string): void {
    const account = this.accounts.get(this.lower(from));
    this.accounts.delete(this.lower(from));
    if (account !== undefined) this.accounts.set(this.lower(to), account);
  }

  forget(nick: string): void {
    this.accounts.delete(this.lower(nick));
  }

  clear(): void {
    this.accounts.clear();
  }

  /** The account, `null` for not logged in, `undefined` when the book does not know. */
  get(nick: string): string | null | undefined {
    return this.accounts.get(this.lower(nick));
  }
}
