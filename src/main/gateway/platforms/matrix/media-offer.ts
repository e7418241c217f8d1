import { MAX_MEDIA_NAME, mediaName, type MediaKind, type MediaOffer } from '../../media/media';

/**
 * What a media message (`m.image`, `m.audio`, `m.video`, `m.file`) carries:
 * the text the agent is given and the offer of its file, fetched later by
 * MatrixAdapter.openMedia (media-download.ts).
 *
 * Facts, from the spec (client-server API, "m.room.message msgtypes", v1.10+)
 * and its proposals:
 * - the file is `url` (an `mxc://` URI) or, in an encrypted event, `file` (an
 *   EncryptedFile whose key travels in the event): Homing holds no keys, so an
 *   encrypted file is described, never offered;
 * - `info` has `mimetype`, `size` (bytes) and, for audio and video, `duration`
 *   (milliseconds);
 * - captions (MSC2530, in the spec since v1.10): "If `filename` is present and
 *   `body` differs, `body` is a caption; otherwise `body` is the file name";
 * - voice notes (MSC3245, as Element sends them): an `m.audio` with
 *   `org.matrix.msc3245.voice: {}` and the extensible-events audio block
 *   `org.matrix.msc1767.audio: {duration, waveform}` (duration in ms).
 *
 * Every field is read on its own, with its type checked: a malformed one loses
 * only itself (or the offer), never the message, whose text still says what
 * it carried.
 */

export const MEDIA_MSGTYPES = new Set(['m.image', 'm.audio', 'm.video', 'm.file']);

/** The text and the offer of one media message (no offer: encrypted, or no usable `mxc://` URI). */
export interface MediaMessage {
  readonly text: string;
  readonly offer: MediaOffer | undefined;
}

/**
 * `mxc://<server-name>/<media-id>`. The spec's content repository section
 * ("Security considerations") has homeservers allow only `A-Za-z0-9`, `_` and
 * `-` in a media id (against directory traversal); the server name follows the
 * appendix's grammar (a DNS name or an IP literal, an optional port). Anything
 * else is not a file Homing asks for.
 */
const MXC = /^mxc:\/\/((?:[A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}|\[[0-9A-Fa-f:.]{2,45}\])(?::(\d{1,5}))?\/([A-Za-z0-9_-]{1,255})$/;

export interface MxcUri {
  /** The server name with its port, as the download path takes it (`example.org:8448`). */
  readonly serverName: string;
  readonly mediaId: string;
}

export function parseMxc(uri: string): MxcUri | undefined {
  if (uri.length > 600) return undefined;
  const match = MXC.exec(uri);
  if (!match) return undefined;
  const port = match[2];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) return undefined;
  return { serverName: port !== undefined ? `${match[1]}:${port}` : match[1]!, mediaId: match[3]! };
}

/** `IMG_1234.jpg`, `report final.pdf`: one line, an extension, not too long (else `body` is a description, not a name). */
const FILE_NAME = /^[^\n\r/\\]{1,255}\.[A-Za-z0-9]{1,10}$/;
/** Longest caption kept: longer than any a client sends, cut rather than trusted. */
const MAX_CAPTION = 16_384;

/** The text and offer of a media message; `body` is the event's body with any reply quote removed. */
export function readMediaMessage(msgtype: string, body: string, content: Record<string, unknown>): MediaMessage {
  const info = record(content.info);
  const filename = text(content.filename);
  // The spec: with `filename` present and different, `body` is a caption; else `body` is the name (when it looks like one).
  const caption = filename !== undefined && body.trim() !== '' && body !== filename ? cut(body) : undefined;
  const name = mediaName(filename ?? (FILE_NAME.test(body.trim()) ? body.trim() : undefined));
  const kind = kindOf(msgtype, content);
  const durationMs = number(info.duration) ?? number(record(content['org.matrix.msc1767.audio']).duration);
  const durationS = durationMs !== undefined ? Math.round(durationMs / 100) / 10 : undefined;
  const encrypted = typeof content.url !== 'string' && typeof content.file === 'object' && content.file !== null;
  const description = describe(kind, name, durationS, encrypted);
  const shown = caption !== undefined ? (encrypted ? `${caption}\n${description}` : caption) : description;
  const source = typeof content.url === 'string' ? content.url : undefined;
  if (encrypted || source === undefined || !parseMxc(source)) return { text: shown, offer: undefined };
  const mime = mimeType(info.mimetype);
  const size = number(info.size);
  return {
    text: shown,
    offer: {
      kind,
      source,
      ...(mime !== undefined ? { mime } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(size !== undefined && Number.isSafeInteger(size) ? { size } : {}),
      ...(durationS !== undefined && (kind === 'voice' || kind === 'audio' || kind === 'video') ? { durationS } : {}),
    },
  };
}

function kindOf(msgtype: string, content: Record<string, unknown>): MediaKind {
  switch (msgtype) {
    case 'm.image':
      return 'image';
    case 'm.video':
      return 'video';
    case 'm.audio':
      return content['org.matrix.msc3245.voice'] !== undefined || content['org.matrix.msc1767.audio'] !== undefined ? 'voice' : 'audio';
    default:
      return 'document';
  }
}

/** `[photo]`, `[voice note, 12 s]`, `[file: report.pdf]`, like the other platforms' descriptions. */
function describe(kind: MediaKind, name: string | undefined, durationS: number | undefined, encrypted: boolean): string {
  const named = name !== undefined ? `: ${name}` : '';
  const seconds = durationS !== undefined ? `, ${formatDuration(durationS)}` : '';
  const what = {
    image: `photo${named}`,
    voice: `voice note${seconds}`,
    audio: `audio${named}${seconds}`,
    video: `video${named}${seconds}`,
    document: `file${named}`,
  }[kind];
  return encrypted ? `[${what} — end-to-end encrypted; Homing cannot open encrypted files yet]` : `[${what}]`;
}

function formatDuration(total: number): string {
  const s = Math.round(total);
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** `type/subtype` (RFC 6838 restricted names), lower-cased; anything else is dropped (a claim, checked against the bytes later). */
function mimeType(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const bare = value.split(';')[0]!.trim();
  return /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/.test(bare) ? bare.toLowerCase() : undefined;
}

function number(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER ? value : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_MEDIA_NAME * 4 ? value : undefined;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function cut(value: string): string {
  return value.length > MAX_CAPTION ? value.slice(0, MAX_CAPTION) + ' […]' : value;
}
