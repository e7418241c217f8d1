import type { IrcMessageEvent } from 'irc-framework';
import type { InboundMessage } from '../adapter';
import type { AllowDecision } from './allowlist';
import { addressedText, mentions } from './nick';

export interface InboundContext {
  /** Our current nick first, then the configured one (people address either). */
  readonly ownNicks: readonly string[];
  readonly isChannel: (target: string) => boolean;
  readonly isSelf: (nick: string) => boolean;
  /** The allowlist's answer from what is known now (the account tag, the account book). */
  readonly isAllowed: (nick: string, event: IrcMessageEvent) => AllowDecision;
  readonly messageRef: (event: IrcMessageEvent, chatId: string) => string;
}

export type InboundDecision =
  | { readonly kind: 'message'; readonly message: InboundMessage }
  /** Addressed to us by someone not on the allowlist. */
  | { readonly kind: 'refuse'; readonly nick: string }
  /** Addressed to us by someone only their account can admit: ask the server, then decide. */
  | { readonly kind: 'ask-account'; readonly nick: string; readonly message: InboundMessage }
  | { readonly kind: 'ignore' };

/**
 * What a PRIVMSG or ACTION means for the gateway. Channel chatter not addressed to
 * us is ignored; so is anything from ourselves or from the server. The allowlist is
 * checked only for lines meant for us, so a busy channel never causes refusals.
 */
export function decideInbound(kind: 'privmsg' | 'action', event: IrcMessageEvent, context: InboundContext): InboundDecision {
  if (event.from_server || !event.nick || context.isSelf(event.nick)) return { kind: 'ignore' };
  const inChannel = context.isChannel(event.target);
  let text: string | undefined;
  if (kind === 'action') {
    // A channel /me counts only when it names us; the agent sees it as IRC logs show it.
    text = !inChannel || mentions(event.message, context.ownNicks) ? `* ${event.nick} ${event.message}` : undefined;
  } else {
    text = inChannel ? addressedText(event.message, context.ownNicks) : event.message;
  }
  if (text === undefined || text.trim() === '') return { kind: 'ignore' };
  const allowed = context.isAllowed(event.nick, event);
  if (allowed === 'refused') return { kind: 'refuse', nick: event.nick };

  const chatId = inChannel ? event.target : event.nick;
  const messageRef = context.messageRef(event, chatId);
  const message: InboundMessage = {
    source: {
      platform: 'irc',
      chatId,
      chatType: inChannel ? 'group' : 'direct',
      senderId: event.nick,
      senderName: event.nick,
      ...(inChannel ? { chatName: event.target } : {}),
      messageId: messageRef,
    },
    text,
    messageRef,
  };
  return allowed === 'allowed' ? { kind: 'message', message } : { kind: 'ask-account', nick: event.nick, message };
}
