/**
 * Mail that must never be answered (RFC 3834): anything sent by a program —
 * auto-replies, bounces, mailing lists, bulk mail — and mail from the
 * assistant's own addresses. Answering those is how two robots end up mailing
 * each other forever.
 */

/** Header name (lower case) → every value, as written in the message. */
export type RawHeaders = ReadonlyMap<string, readonly string[]>;

/** Why a message is automatic, in words for the log; undefined when a person wrote it. */
export function automaticReason(headers: RawHeaders, fromAddress: string | undefined, ownAddresses: ReadonlySet<string>): string | undefined {
  const first = (name: string) => headers.get(name)?.[0]?.trim();
  const autoSubmitted = first('auto-submitted');
  if (autoSubmitted !== undefined && autoSubmitted.split(/[;\s(]/)[0]!.toLowerCase() !== 'no') return `Auto-Submitted: ${autoSubmitted.slice(0, 40)}`;
  const returnPath = headers.get('return-path');
  if (returnPath !== undefined && returnPath.some((value) => /^<\s*>$/.test(value.trim()) || value.trim() === '')) return 'an empty Return-Path (a bounce or a notification)';
  const precedence = first('precedence')?.toLowerCase();
  if (precedence !== undefined && ['bulk', 'list', 'junk'].includes(precedence)) return `Precedence: ${precedence}`;
  if (headers.has('list-id')) return 'a mailing list (List-Id)';
  if (headers.has('list-unsubscribe')) return 'a mailing list or newsletter (List-Unsubscribe)';
  if (headers.has('x-autoreply') || headers.has('x-autorespond')) return 'an auto-reply (X-Autoreply)';
  const contentType = first('content-type')?.toLowerCase();
  if (contentType?.startsWith('multipart/report')) return 'a delivery or read report';
  if (fromAddress === undefined) return 'no sender address';
  if (ownAddresses.has(fromAddress.toLowerCase())) return 'sent from one of this assistant’s own addresses';
  return undefined;
}
