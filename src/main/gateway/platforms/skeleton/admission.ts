/** What an inbound message earns: the agent's attention, a pairing code, or nothing. */
export type AdmissionDecision = 'agent' | 'pair' | 'ignore';

/** The direct-message settings every platform with pairing shares (config-schema's `dmPolicy`, `allowFrom`). */
export interface DirectRules {
  readonly dmPolicy: 'pairing' | 'allowlist' | 'open';
  /** Senders always let in; with `allowlist`, the only ones. */
  readonly allowFrom: readonly string[];
}

/** One group place's settings (a Telegram group, a Discord channel or server, a Matrix room). */
export interface PlaceRules {
  /** Who may talk there: empty means the allowlisted and approved senders, `*` anyone. */
  readonly allowFrom: readonly string[];
  /** Only messages addressed to the bot count. */
  readonly requireMention: boolean;
}

/** The pairing store's answer about a sender (access/pairing-store.ts). */
export interface ApprovedSenders {
  isApproved(senderId: string): boolean;
}

/**
 * Who may talk to the agent, by the rules every platform with pairing
 * shares. What is the platform's own stays with its adapter: how a sender is
 * known, which place's rules apply, what "addressed" means there, and what a
 * `pair` decision sends (the pairing flow).
 */
export class Admission {
  constructor(
    private readonly rules: DirectRules,
    /** Absent where pairing is not set up (XMPP without a pairing store): a stranger is then ignored. */
    private readonly access: ApprovedSenders | undefined,
  ) {}

  /** Listed in allowFrom, or approved by the owner through pairing. */
  allowed(sender: string): boolean {
    return this.rules.allowFrom.includes(sender) || this.access?.isApproved(sender) === true;
  }

  /** A direct message, by `dmPolicy`. */
  direct(sender: string): AdmissionDecision {
    switch (this.rules.dmPolicy) {
      case 'open':
        return 'agent';
      case 'allowlist':
        return this.rules.allowFrom.includes(sender) ? 'agent' : 'ignore';
      case 'pairing':
        return this.allowed(sender) ? 'agent' : this.access ? 'pair' : 'ignore';
    }
  }

  /**
   * A message in a group place: ignored where the bot has no rules for the
   * place, or when it must be addressed and is not. A stranger in a group
   * gets no pairing code (the code would be read by the whole room).
   */
  inPlace(sender: string, place: PlaceRules | undefined, addressed: () => boolean): AdmissionDecision {
    if (!place) return 'ignore';
    const senderOk = place.allowFrom.length === 0 ? this.allowed(sender) : place.allowFrom.includes('*') || place.allowFrom.includes(sender);
    if (!senderOk) return 'ignore';
    if (place.requireMention && !addressed()) return 'ignore';
    return 'agent';
  }
}
