import type { Attachment } from 'mailparser';
import { MAX_MEDIA_NAME, MAX_MEDIA_PER_MESSAGE, type MediaKind } from '../../media/media';

/**
 * A mail's files as media: which MIME parts are files the person attached, and
 * the locator (`MediaOffer.source`) that finds one again on the server.
 *
 * Nothing of a file is kept but its locator: `openMedia` fetches the message
 * again and parses it with the same parser, so the file is the same part of
 * the same parse. The locator names the message as IMAP does for good — its
 * folder, the folder's UIDVALIDITY and the UID (RFC 3501 §2.3.1.1: a UID with
 * its UIDVALIDITY never names another message) — and the file by its place in
 * the parser's list of attachments.
 */

/** A file of a mail, as offered: its place in the parser's attachments and what the mail says of it. */
export interface MailFile {
  /** Index in mailparser's `attachments` of the message (the locator's last field). */
  readonly index: number;
  readonly kind: MediaKind;
  readonly mime: string;
  readonly name: string | undefined;
  /** Decoded bytes. */
  readonly size: number;
}

/** Where a mail's file is on the server. */
export interface MailFileLocator {
  readonly folder: string;
  readonly uidValidity: number;
  readonly uid: number;
  readonly index: number;
}

/** Attachments a parse may list before the rest are left alone: far above any real mail, low enough that hostile MIME stays cheap. */
const MAX_INDEX = 9_999;
/** UIDs and UIDVALIDITY are unsigned 32-bit (RFC 3501 §9, nz-number). */
const MAX_U32 = 0xffff_ffff;

/**
 * Whether a part is a file the person attached: `Content-Disposition:
 * attachment`; a part without one that the parser took for a file (a PDF whose
 * sender named it only in Content-Type); an inline part with a file name (Apple
 * Mail puts PDFs and photos inline); an inline image with a Content-ID (a
 * picture in the HTML). Not: inline parts with neither, which are the mail's
 * own decoration.
 */
export function isAttachedFile(attachment: Pick<Attachment, 'contentDisposition' | 'filename' | 'contentType' | 'cid'>): boolean {
  const disposition = attachment.contentDisposition?.toLowerCase();
  if (disposition !== 'inline') return true;
  if (attachment.filename) return true;
  return attachment.contentType.toLowerCase().startsWith('image/') && attachment.cid !== undefined;
}

/** The files a mail carries, in the parser's order; `offered` at most MAX_MEDIA_PER_MESSAGE, the rest only described. */
export function mailFiles(attachments: readonly Attachment[]): { offered: MailFile[]; beyond: MailFile[] } {
  const files: MailFile[] = [];
  attachments.forEach((attachment, index) => {
    if (index > MAX_INDEX || !isAttachedFile(attachment)) return;
    const mime = attachment.contentType.toLowerCase();
    const name = attachment.filename ? cleanName(attachment.filename) : undefined;
    files.push({ index, kind: kindOf(mime), mime, name: name || undefined, size: attachment.size });
  });
  return { offered: files.slice(0, MAX_MEDIA_PER_MESSAGE), beyond: files.slice(MAX_MEDIA_PER_MESSAGE) };
}

/** A file's kind from its declared type; the bytes are checked again once fetched (media/mime.ts). */
export function kindOf(mime: string): MediaKind {
  const bare = mime.split(';')[0]!.trim().toLowerCase();
  if (['image/jpeg', 'image/png', 'image/gif', 'image/webp'].includes(bare)) return 'image';
  // A voice memo mailed from a phone is an audio file like any other: named, with no "voice note" flag.
  if (bare.startsWith('audio/')) return 'audio';
  if (bare.startsWith('video/')) return 'video';
  return 'document';
}

/** `<folder, URI-encoded>/<UIDVALIDITY>/<UID>/<index>`: a folder's name may hold `/` and anything else. */
export function mailFileSource(locator: MailFileLocator): string {
  return `${encodeURIComponent(locator.folder)}/${locator.uidValidity}/${locator.uid}/${locator.index}`;
}

/**
 * A locator read back, or undefined for anything this adapter did not write:
 * the source comes from the database, where a damaged or foreign value must
 * never become an IMAP command (a folder name is sent quoted by imapflow, and
 * is checked here to be one line of at most 500 characters, as config allows).
 */
export function parseMailFileSource(source: string): MailFileLocator | undefined {
  const match = /^([^/]{1,1600})\/([1-9]\d{0,9})\/([1-9]\d{0,9})\/(0|[1-9]\d{0,3})$/.exec(source);
  if (!match) return undefined;
  let folder: string;
  try {
    folder = decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  if (folder.length === 0 || folder.length > 500 || /[\u0000-\u001f\u007f]/.test(folder) || encodeURIComponent(folder) !== match[1]) return undefined;
  const uidValidity = Number(match[2]);
  const uid = Number(match[3]);
  const index = Number(match[4]);
  if (uidValidity > MAX_U32 || uid > MAX_U32 || index > MAX_INDEX) return undefined;
  return { folder, uidValidity, uid, index };
}

/**
 * A sender's file name as shown (in the mail's text line and to the agent):
 * one line, without invisible and direction-changing characters (a name that
 * reads `gpj.exe` backwards as `exe.jpg`), at most MAX_MEDIA_NAME characters.
 */
function cleanName(name: string): string {
  const plain = name.replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ').replace(/\s+/g, ' ').trim();
  const points = [...plain];
  return points.length > MAX_MEDIA_NAME ? `${points.slice(0, MAX_MEDIA_NAME - 1).join('')}…` : plain;
}
