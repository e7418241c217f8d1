import { MAX_MEDIA_PER_MESSAGE, MEDIA_KINDS, mediaName, type MediaKind, type MediaOffer } from '../../media/media';
import { labelOf } from '../../media/media-for-agent';
import { destinationOf } from './inbound';

/**
 * A received Signal message's attachments as media offers. Facts from
 * signal-cli (github.com/AsamK/signal-cli at c26e0632, 0.14.7-SNAPSHOT):
 * - `src/main/java/org/asamk/signal/json/JsonAttachment.java`: each entry of
 *   `dataMessage.attachments` is `{contentType, filename, id, size, width,
 *   height, caption, uploadTimestamp}`, absent values written as `null` (the
 *   record has no NON_NULL, and Util.createJsonObjectMapper sets none). There
 *   is no voice-note flag in the JSON at that commit (MessageEnvelope's
 *   `isVoiceNote` reaches only the plain-text and D-Bus outputs), so a voice
 *   note arrives as audio; a `voiceNote: true` is honoured should a later
 *   version add it.
 * - `lib/.../manager/storage/AttachmentStore.java`: the `id` is the name of
 *   the file signal-cli keeps in its own data directory, the remote id with
 *   every character outside `[A-Za-z0-9_.-]` replaced, plus an extension
 *   (`sanitizeId`, `getAttachmentFile`). The extension comes unsanitized from
 *   the sender's file name, but `retrieveAttachment` sanitizes the id it is
 *   asked for, so only an id of `[A-Za-z0-9_.-]` can ever be fetched: Homing
 *   offers only those, and never uses one as a path (it hands the id back to
 *   `getAttachment`).
 * - `lib/.../manager/api/MessageEnvelope.java` (Data.from): a long text's
 *   `text/x-signal-plain` attachment stays in the list, but its text is already
 *   the message's body, so it is not offered.
 * - `lib/.../manager/helper/IncomingMessageHandler.java` line 925: the daemon
 *   downloads every attachment before it hands the message on (unless started
 *   with `--ignore-attachments`).
 *
 * Each attachment is read on its own: a malformed one is described in the text
 * instead of offered, and never costs the message.
 */

/** signal-cli's attachment id: a sanitized remote id and an extension (AttachmentStore.sanitizeId). */
const ATTACHMENT_ID = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,254}$/;
const MIME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;
/** MimeUtils.LONG_TEXT: the whole text of a long message, already the body. */
const LONG_TEXT = 'text/x-signal-plain';
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Longest caption kept (Signal's own captions are short; the body's bound applies to the rest). */
const MAX_CAPTION = 4096;

/** What the message's attachments give: the offers, and the words for the text (for a message with no body). */
export interface SignalAttachments {
  readonly offers: MediaOffer[];
  /** What each offered file is, `[photo]`, `[document “a.pdf”]`: the text of a message without one. */
  readonly labels: string[];
  /** `[document “a.pdf”: Homing cannot fetch it]` for each attachment not offered: always added to the text. */
  readonly notes: string[];
  /** Captions the sender gave its attachments, in order. */
  readonly captions: string[];
}

/** Where a file was received: the person (recipient) or the group, for `getAttachment`'s documented parameters. */
export type AttachmentPlace = { readonly recipient: string } | { readonly groupId: string };

/**
 * The source Homing keeps for an offered file: `sg:<id>:<declared bytes>:<chat>`
 * (chat as chatIdOf gives it). The declared size lets openMedia refuse a file
 * over the limit before signal-cli reads and encodes it; the chat is the
 * `recipient`/`groupId` signal-cli's man page asks `getAttachment` for.
 */
export function attachmentSource(id: string, size: number | undefined, chatId: string): string {
  return `sg:${id}:${size ?? ''}:${chatId}`;
}

export interface ParsedSource {
  readonly id: string;
  readonly size: number | undefined;
  readonly place: AttachmentPlace;
}

export function parseAttachmentSource(source: string): ParsedSource | undefined {
  const match = /^sg:([^:]{1,255}):(\d{0,16}):(.{1,300})$/.exec(source);
  if (!match || !ATTACHMENT_ID.test(match[1]!)) return undefined;
  const destination = destinationOf(match[3]!);
  if (!destination) return undefined;
  const size = match[2] === '' ? undefined : Number(match[2]);
  if (size !== undefined && !Number.isSafeInteger(size)) return undefined;
  return { id: match[1]!, size, place: 'groupId' in destination ? { groupId: destination.groupId } : { recipient: destination.recipient[0]! } };
}

export function isAttachmentId(id: unknown): id is string {
  return typeof id === 'string' && ATTACHMENT_ID.test(id);
}

/** The offers of `dataMessage.attachments` (at most MAX_MEDIA_PER_MESSAGE), for a message in `chatId`. */
export function attachmentOffers(raw: unknown, chatId: string): SignalAttachments {
  const offers: MediaOffer[] = [];
  const labels: string[] = [];
  const notes: string[] = [];
  const captions: string[] = [];
  const items = Array.isArray(raw) ? raw.slice(0, 100) : [];
  for (const item of items) {
    const entry = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Record<string, unknown>) : {};
    const mime = typeof entry.contentType === 'string' && MIME.test(entry.contentType.split(';')[0]!.trim()) ? entry.contentType.split(';')[0]!.trim().toLowerCase() : undefined;
    if (mime === LONG_TEXT) continue;
    const name = mediaName(entry.filename);
    const caption = typeof entry.caption === 'string' && entry.caption.trim() !== '' ? entry.caption.slice(0, MAX_CAPTION) : undefined;
    if (caption !== undefined) captions.push(caption);
    const size = typeof entry.size === 'number' && Number.isSafeInteger(entry.size) && entry.size >= 0 ? entry.size : undefined;
    const kind: MediaKind = entry.voiceNote === true && mime?.startsWith('audio/') ? 'voice' : kindOf(mime);
    if (!isAttachmentId(entry.id) || offers.length >= MAX_MEDIA_PER_MESSAGE) {
      notes.push(`[${labelOf({ kind, name })}: Homing cannot fetch it]`);
      continue;
    }
    const offer: MediaOffer = {
      kind,
      source: attachmentSource(entry.id, size, chatId),
      ...(mime !== undefined ? { mime } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(size !== undefined ? { size } : {}),
    };
    offers.push(offer);
    labels.push(`[${labelOf(offer)}]`);
  }
  return { offers, labels, notes, captions };
}

/**
 * An offer read back from the inbox journal: the same bounds as when it was
 * made, so a damaged journal line loses that offer, not its message.
 */
export function journaledOffer(value: unknown): MediaOffer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const offer = value as Record<string, unknown>;
  if (typeof offer.kind !== 'string' || !(MEDIA_KINDS as readonly string[]).includes(offer.kind)) return undefined;
  if (typeof offer.source !== 'string' || !parseAttachmentSource(offer.source)) return undefined;
  const mime = typeof offer.mime === 'string' && MIME.test(offer.mime) ? offer.mime : undefined;
  const name = mediaName(offer.name);
  const size = typeof offer.size === 'number' && Number.isSafeInteger(offer.size) && offer.size >= 0 ? offer.size : undefined;
  return {
    kind: offer.kind as MediaKind,
    source: offer.source,
    ...(mime !== undefined ? { mime } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(size !== undefined ? { size } : {}),
  };
}

function kindOf(mime: string | undefined): MediaKind {
  if (mime === undefined) return 'document';
  if (IMAGE_TYPES.has(mime)) return 'image';
  if (mime.startsWith('audio/')) return 'audio';
  if (mime.startsWith('video/')) return 'video';
  return 'document';
}

