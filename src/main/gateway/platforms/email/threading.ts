/**
 * Threads by their headers (RFC 5322 §3.6.4): a message's thread is the first
 * id in `References` (the thread's root), else its `In-Reply-To`, else its own
 * `Message-ID`. A reply names the message it answers in `In-Reply-To` and the
 * chain in `References`: the root, and the message answered.
 */

const MSG_ID = /<[^<>\s]{1,998}>/g;

/** The `<…>` ids in a header value, in order (comments and junk between them are skipped). */
export function messageIds(value: string | undefined): string[] {
  if (value === undefined) return [];
  return [...value.matchAll(MSG_ID)].map((match) => match[0]).slice(0, 200);
}

export function threadRoot(headers: { readonly references?: string | undefined; readonly inReplyTo?: string | undefined; readonly messageId: string }): string {
  return messageIds(headers.references)[0] ?? messageIds(headers.inReplyTo)[0] ?? headers.messageId;
}

/** `Re: <subject>`, without piling up prefixes (`Re: Re: Fwd:` stays one `Re:`). */
export function replySubject(subject: string | undefined): string {
  const clean = (subject ?? '').replace(/[\r\n]+/g, ' ').trim();
  const bare = clean.replace(/^(?:\s*(?:re|aw|sv|vs|antw)(?:\[\d+\])?\s*:\s*)+/i, '');
  const text = bare === '' ? '(no subject)' : bare;
  return `Re: ${truncate(text, 400)}`;
}

/** The reply's `References`: the thread's root and the message answered (RFC 5322 allows a shortened chain that keeps the first id). */
export function replyReferences(root: string | null, inReplyTo: string | null): string[] {
  const ids: string[] = [];
  for (const id of [root, inReplyTo]) if (id !== null && /^<[^<>\s]+>$/.test(id) && !ids.includes(id)) ids.push(id);
  return ids;
}

function truncate(text: string, max: number): string {
  const points = [...text];
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`;
}
