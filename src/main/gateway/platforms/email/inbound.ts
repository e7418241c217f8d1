import type { AddressObject, ParsedMail } from 'mailparser';
import { loadMailLibs, type MailLibs } from './load-mail-libs';
import { mailFiles, type MailFile } from './attachments';
import { readAuthResults, describeAuthResults, type AuthResults } from './auth-results';
import { automaticReason, type RawHeaders } from './automatic';
import { messageIds, threadRoot } from './threading';

/** One message read from the mailbox, reduced to what the gateway needs. */
export interface IncomingEmail {
  /** `<…>`, the message's own id (made up from its UID when it has none). */
  readonly messageId: string;
  readonly fromAddress: string | undefined;
  readonly fromName: string | undefined;
  readonly subject: string | undefined;
  /** The thread's root id (first of References, else In-Reply-To, else messageId). */
  readonly threadRoot: string;
  /** Why it must not be answered (auto-reply, list, bounce, own address), or undefined. */
  readonly automatic: string | undefined;
  readonly auth: AuthResults;
  /** What the agent is given: the body as plain text, then the sender, subject, sender check and attachments' names in brackets. */
  readonly text: string;
  /** The files offered to the agent (attachments.ts), at most MAX_MEDIA_PER_MESSAGE; those beyond are only named in `text`. */
  readonly files: readonly MailFile[];
}

export interface ParseContext {
  readonly ownAddresses: ReadonlySet<string>;
  /** The authserv-ids whose Authentication-Results are believed (lower case); none: no header is. */
  readonly trustedAuthServIds: readonly string[];
  /** Used as the message's id when it has no Message-ID. */
  readonly fallbackId: string;
  /** Set when only the header was fetched: the message was larger than the limit (its size in bytes). */
  readonly tooLargeBytes?: number | undefined;
}

/** The most body text handed to the agent; the rest is cut with a note. */
export const MAX_BODY_CHARS = 60_000;
const MAX_ATTACHMENTS_LISTED = 30;

/**
 * A raw message parsed: the one parse both intake and `openMedia` use, so a
 * file's index among the attachments means the same part in both.
 */
export async function parseMime(source: Buffer, libs: MailLibs): Promise<ParsedMail> {
  return libs.simpleParser(source, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true, maxHtmlLengthToParse: 2_000_000 });
}

export async function parseEmail(source: Buffer, context: ParseContext): Promise<IncomingEmail> {
  const libs = await loadMailLibs();
  const parsed = await parseMime(source, libs);
  const headers = rawHeaders(parsed.headerLines);
  const from = firstAddress(parsed.from);
  const ownId = messageIds(headers.get('message-id')?.[0])[0];
  const messageId = ownId ?? context.fallbackId;
  const root = threadRoot({ references: headers.get('references')?.join(' '), inReplyTo: headers.get('in-reply-to')?.[0], messageId });
  const auth = readAuthResults(headers.get('authentication-results') ?? [], from?.address, context.trustedAuthServIds);
  const subject = parsed.subject?.replace(/[\r\n]+/g, ' ').trim();

  // The body comes first: previews (the window's list, "please send it again") show what the person wrote.
  const lines: string[] = [];
  const sender = from ? (from.name ? `${from.name} <${from.address}>` : from.address) : '(no sender)';
  lines.push(`[Email from ${sender}${subject ? `, subject: ${subject}` : ''}]`);
  lines.push(`[Sender check: ${describeAuthResults(auth)}]`);
  // The files themselves are offered as media; their names stay in the text, which later turns see.
  const files = mailFiles(parsed.attachments);
  if (files.offered.length > 0) lines.push(`[Attachments: ${listed(files.offered)}]`);
  if (files.beyond.length > 0) lines.push(`[More attachments, not opened (one mail hands over at most ${files.offered.length}): ${listed(files.beyond)}]`);
  let body: string;
  if (context.tooLargeBytes !== undefined) {
    body = `(This message is ${formatBytes(context.tooLargeBytes)}, more than this assistant reads; only its header was read.)`;
  } else {
    const plain = typeof parsed.text === 'string' && parsed.text.trim() !== '' ? parsed.text : typeof parsed.html === 'string' ? htmlToPlain(parsed.html, libs.convert) : '';
    body = withoutQuotedTail(plain.replace(/\r\n?/g, '\n')).trim();
    if (body.length > MAX_BODY_CHARS) body = `${body.slice(0, MAX_BODY_CHARS)}\n… (the rest of this long message was cut)`;
    if (body === '') body = '(no text)';
  }
  return {
    messageId,
    fromAddress: from?.address,
    fromName: from?.name,
    subject,
    threadRoot: root,
    automatic: automaticReason(headers, from?.address, context.ownAddresses),
    auth,
    text: `${body}\n\n${lines.join('\n')}`,
    files: files.offered,
  };
}

function listed(files: readonly MailFile[]): string {
  const named = files.slice(0, MAX_ATTACHMENTS_LISTED).map((file) => `${file.name ?? 'unnamed'} (${file.mime}, ${formatBytes(file.size)})`);
  return `${named.join('; ')}${files.length > MAX_ATTACHMENTS_LISTED ? `, and ${files.length - MAX_ATTACHMENTS_LISTED} more` : ''}`;
}

/** HTML mail as plain text, through html-to-text (links kept as `text [url]`, images and styles dropped). */
export function htmlToPlain(html: string, convert: MailLibs['convert']): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true, ignoreHref: false } },
    ],
  });
}

/**
 * Drops the quoted previous message at the end of a reply ("On … wrote:" and
 * the `>` lines after it): the agent has the conversation already.
 */
export function withoutQuotedTail(text: string): string {
  const lines = text.split('\n');
  let end = lines.length;
  while (end > 0 && (lines[end - 1]!.trim() === '' || lines[end - 1]!.startsWith('>'))) end--;
  if (end === lines.length || !lines.slice(end).some((line) => line.startsWith('>'))) return text;
  if (end > 0 && /\bwrote:\s*$|schrieb:\s*$|a écrit\s*:\s*$/i.test(lines[end - 1]!)) end--;
  return end === 0 ? text : lines.slice(0, end).join('\n');
}

/** Header name → values, from mailparser's raw lines (unfolded). */
function rawHeaders(lines: readonly { key: string; line: string }[]): RawHeaders {
  const map = new Map<string, string[]>();
  for (const { key, line } of lines) {
    const colon = line.indexOf(':');
    const value = (colon >= 0 ? line.slice(colon + 1) : '').replace(/\r?\n[ \t]*/g, ' ').trim();
    const list = map.get(key.toLowerCase()) ?? [];
    if (list.length < 50) list.push(value);
    map.set(key.toLowerCase(), list);
  }
  return map;
}

function firstAddress(from: AddressObject | AddressObject[] | undefined): { address: string; name: string | undefined } | undefined {
  const object = Array.isArray(from) ? from[0] : from;
  const first = object?.value.find((entry) => typeof entry.address === 'string' && entry.address.includes('@'));
  if (!first?.address) return undefined;
  return { address: first.address.toLowerCase().slice(0, 320), name: first.name ? oneLine(first.name).slice(0, 200) : undefined };
}

function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim();
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
