import type { Element } from '@xmpp/client';
import { mediaName, type MediaKind, type MediaOffer } from '../../media/media';

/**
 * Files in XMPP messages: XEP-0066 Out of Band Data, `<x xmlns='jabber:x:oob'>
 * <url>…</url></x>`, which Conversations, Dino, Gajim and others send after
 * uploading the file with XEP-0363 HTTP File Upload, with the same URL as the
 * body so clients without OOB show a link. The offer's source is the URL; the
 * name is its last path segment, the kind its extension's (the bytes decide
 * the type later); the size is unknown until the response.
 */

export const NS_OOB = 'jabber:x:oob';
/** Longer than any upload URL a server hands out (prosody's are ~100 characters); a longer one is not offered. */
export const MAX_OOB_URL = 2048;

const EXTENSIONS: Readonly<Record<string, { kind: MediaKind; mime: string }>> = {
  jpg: { kind: 'image', mime: 'image/jpeg' },
  jpeg: { kind: 'image', mime: 'image/jpeg' },
  png: { kind: 'image', mime: 'image/png' },
  gif: { kind: 'image', mime: 'image/gif' },
  webp: { kind: 'image', mime: 'image/webp' },
  // Conversations records voice messages as Opus in OGG (.oga, .opus) or AAC in MP4 (.m4a): taken as voice notes.
  oga: { kind: 'voice', mime: 'audio/ogg' },
  opus: { kind: 'voice', mime: 'audio/ogg' },
  m4a: { kind: 'voice', mime: 'audio/mp4' },
  ogg: { kind: 'audio', mime: 'audio/ogg' },
  mp3: { kind: 'audio', mime: 'audio/mpeg' },
  wav: { kind: 'audio', mime: 'audio/wav' },
  flac: { kind: 'audio', mime: 'audio/flac' },
  mp4: { kind: 'video', mime: 'video/mp4' },
  webm: { kind: 'video', mime: 'video/webm' },
  pdf: { kind: 'document', mime: 'application/pdf' },
  txt: { kind: 'document', mime: 'text/plain' },
};

/** What an OOB element offers, and the text that stands for it. */
export interface OobFile {
  readonly offer: MediaOffer;
  /** `[file: name]`, said where the body only repeats the URL. */
  readonly label: string;
}

/** The file the first OOB element with a usable http(s) URL points at; undefined when there is none. */
export function oobFile(stanza: Element): OobFile | undefined {
  for (const x of stanza.getChildren('x', NS_OOB).slice(0, 5)) {
    const url = usableUrl(x.getChildText('url'));
    if (url === undefined) continue;
    const name = nameOf(url);
    const extension = /\.([A-Za-z0-9]{1,5})$/.exec(name ?? '')?.[1]?.toLowerCase();
    const known = extension !== undefined ? EXTENSIONS[extension] : undefined;
    return {
      offer: { kind: known?.kind ?? 'document', source: url.href, ...(known ? { mime: known.mime } : {}), ...(name !== undefined ? { name } : {}) },
      label: `[file${name !== undefined ? `: ${name}` : ''}]`,
    };
  }
  return undefined;
}

/**
 * The text for a message with a file: the label where the body is empty or
 * only the URL (as clients send it), else the body with the label after it.
 */
export function textWithFile(body: string | undefined, file: OobFile): string {
  const said = body?.trim() ?? '';
  if (said === '' || said === file.offer.source || safeHref(said) === file.offer.source) return file.label;
  return `${body}\n${file.label}`;
}

function usableUrl(text: string | null): URL | undefined {
  const raw = text?.trim();
  if (!raw || raw.length > MAX_OOB_URL) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  // Credentials in a URL would be sent by a fetch: such a URL is not offered at all.
  if (url.username !== '' || url.password !== '') return undefined;
  return url.href.length > MAX_OOB_URL ? undefined : url;
}

function safeHref(text: string): string | undefined {
  try {
    return new URL(text).href;
  } catch {
    return undefined;
  }
}

/** The URL's last path segment, decoded and cleaned for showing (never used as a path). */
function nameOf(url: URL): string | undefined {
  const segment = url.pathname.split('/').filter((part) => part !== '').at(-1);
  if (segment === undefined) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    decoded = segment;
  }
  return mediaName(decoded);
}
