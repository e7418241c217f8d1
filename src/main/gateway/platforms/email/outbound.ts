import type { SendMailOptions } from 'nodemailer';
import type { SendTarget } from '../adapter';
import type { EmailConfig } from './config-schema';
import type { ThreadMemory } from './mailbox-state';
import { replyReferences, replySubject } from './threading';

/**
 * A reply as one email: threaded under the message it answers, marked as
 * automatic (so another robot does not answer it), with a Message-ID derived
 * from the chunk's idempotency key. A resend after a crash carries the same
 * Message-ID, so a mail client (or a person reading the headers) can tell the
 * two copies are one message; the ledger's marker line says so in the text.
 *
 * The body is quoted-printable: every line on the wire stays far below SMTP's
 * 998 octets however long the reply's own lines are, and non-ASCII text
 * survives any relay.
 */
export function replyMail(config: Pick<EmailConfig, 'address' | 'name'>, text: string, target: SendTarget, thread: ThreadMemory | undefined, now: Date): SendMailOptions & { messageId: string } {
  const inReplyTo = target.replyTo ?? thread?.last ?? target.threadId;
  const references = replyReferences(target.threadId, inReplyTo);
  const messageId = replyMessageId(target.idempotencyKey, config.address);
  return {
    from: config.name ? { name: config.name, address: config.address } : config.address,
    to: target.chatId,
    subject: replySubject(thread?.subject),
    messageId,
    ...(inReplyTo !== null && /^<[^<>\s]+>$/.test(inReplyTo) ? { inReplyTo } : {}),
    ...(references.length > 0 ? { references } : {}),
    date: now,
    headers: {
      // RFC 3834: an automatic answer; well-behaved responders do not answer it.
      'Auto-Submitted': 'auto-replied',
      // Exchange's own "do not auto-reply to this" (out-of-office and the like).
      'X-Auto-Response-Suppress': 'All',
    },
    text: text.endsWith('\n') ? text : `${text}\n`,
    textEncoding: 'quoted-printable',
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/** `<homing.<key>@<own domain>>`: the same for every send of one chunk, unique across chunks and installs. */
export function replyMessageId(idempotencyKey: string, address: string): string {
  const key = idempotencyKey.replace(/[^A-Za-z0-9._-]/g, '').slice(0, 64) || 'reply';
  return `<homing.${key}@${address.slice(address.lastIndexOf('@') + 1)}>`;
}
