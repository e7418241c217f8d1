import type { Logger } from '../logger';
import { documentText } from './document-text';
import { formatBytes, MediaFetchError, type MediaOpener, type MediaRef, type TurnAttachment } from './media';
import type { FetchedMedia, FetchOptions, MediaStore } from './media-store';
import { isImageMime } from './mime';
import { transcribe, type SpeechConfig } from './transcribe';

/** The `media` section of config.json, as the gateway uses it. */
export interface MediaLimits {
  /** Largest file fetched, bytes. */
  readonly maxFileBytes: number;
  /** Most bytes fetched for one message, all its files together. */
  readonly maxMessageBytes: number;
  /** Characters of documents' text the agent is shown with one message, all together. */
  readonly documentChars: number;
}

/** The limits of config.json's `media` section (MB are 10^6 bytes). */
export function mediaLimits(config: { readonly maxFileMB: number; readonly maxMessageMB: number; readonly documentChars: number }): MediaLimits {
  return {
    maxFileBytes: Math.round(config.maxFileMB * 1_000_000),
    maxMessageBytes: Math.round(config.maxMessageMB * 1_000_000),
    documentChars: config.documentChars,
  };
}

export interface MediaForAgentOptions {
  readonly store: MediaStore;
  /** The platform's way to open its files (its adapter's `openMedia`); undefined while it has none. */
  readonly open: MediaOpener | undefined;
  readonly limits: MediaLimits;
  /** How voice notes and audio are transcribed; undefined: they are not. */
  readonly speech: SpeechConfig | undefined;
  /** Whether the answering agent takes images (it is sent them); else it is told a photo came. */
  readonly images: boolean;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Tries and waits of each fetch (tests shorten them). */
  readonly fetch?: Pick<FetchOptions, 'attempts' | 'backoffMs'> | undefined;
}

/** What the agent is given of a message's media: lines added to its text, and the files. */
export interface MediaForAgent {
  readonly lines: readonly string[];
  readonly attachments: readonly TurnAttachment[];
}

/**
 * Fetches a message's media into the data directory (each once: a file fetched
 * before a crash is not fetched again) and works out what the agent is shown:
 * images as files it is sent (when it takes images), voice notes and audio as
 * their transcripts, documents as their text, and for everything else — or
 * anything that failed — a line saying so in words. Nothing is dropped
 * silently. Transcripts and documents' text are kept beside the file, so a
 * turn answered again after a restart does not work them out again.
 */
export async function mediaForAgent(sessionId: string, refs: readonly MediaRef[], options: MediaForAgentOptions): Promise<MediaForAgent> {
  const lines: string[] = [];
  const attachments: TurnAttachment[] = [];
  let bytesLeft = options.limits.maxMessageBytes;
  let charsLeft = options.limits.documentChars;
  for (const ref of refs) {
    const label = labelOf(ref);
    let file: FetchedMedia;
    try {
      const maxBytes = Math.min(options.limits.maxFileBytes, bytesLeft);
      file = await options.store.fetch(sessionId, ref, options.open, { signal: options.signal, maxBytes, ...options.fetch });
    } catch (error) {
      const why = error instanceof MediaFetchError ? error.message : String(error);
      if (!options.signal.aborted) {
        options.logger.warn('a file of a message could not be fetched', { sessionId, kind: ref.kind, error: why });
        rememberFailure(options.store, sessionId, ref, why, options.logger);
      }
      lines.push(`[${label}: could not be fetched — ${why}]`);
      continue;
    }
    bytesLeft -= file.size;
    const attachment: TurnAttachment = { kind: ref.kind, path: file.path, mime: file.mime, size: file.size, ...(ref.name ? { name: ref.name } : {}) };
    if (isImageMime(file.mime)) {
      attachments.push({ ...attachment, kind: 'image' });
      if (!options.images) lines.push(`[${label}: not shown to you — this agent is not set up to take images]`);
      continue;
    }
    if (ref.kind === 'image') {
      // Declared an image, but its bytes show none Homing knows: a file like any other, said so.
      attachments.push({ ...attachment, kind: 'document' });
      lines.push(`[${label}, ${formatBytes(file.size)}: not shown to you — its bytes are not a JPEG, PNG, GIF or WebP image]`);
      continue;
    }
    attachments.push(attachment);
    if (ref.kind === 'voice' || ref.kind === 'audio') {
      lines.push(await transcriptLine(sessionId, ref, file, label, options));
    } else if (ref.kind === 'document') {
      const line = await documentLine(sessionId, ref, file, label, charsLeft, options);
      charsLeft = Math.max(0, charsLeft - line.length);
      lines.push(line);
    } else {
      lines.push(`[${label}, ${formatBytes(file.size)}: not shown to you — Homing does not pass ${ref.kind === 'video' ? 'videos' : 'such files'} on as content]`);
    }
  }
  return { lines, attachments };
}

/** Notes the failure for the window; a note that cannot be written is only logged (the agent has the line). */
function rememberFailure(store: MediaStore, sessionId: string, ref: MediaRef, why: string, logger: Logger): void {
  try {
    store.markFailed(sessionId, ref, why);
  } catch (error) {
    logger.warn('a failed fetch could not be noted for the window', { sessionId, error });
  }
}

/** How a file is named to the agent: `photo`, `voice note, 12 s`, `document “report.pdf”`. */
export function labelOf(ref: Pick<MediaRef, 'kind' | 'name' | 'durationS'>): string {
  const name = ref.name ? ` “${ref.name}”` : '';
  const duration = ref.durationS !== undefined ? `, ${Math.round(ref.durationS)} s` : '';
  switch (ref.kind) {
    case 'image':
      return name ? `image${name}` : 'photo';
    case 'voice':
      return `voice note${duration}`;
    case 'audio':
      return `audio${name}${duration}`;
    case 'video':
      return `video${name}${duration}`;
    case 'document':
      return `document${name}`;
  }
}

async function transcriptLine(sessionId: string, ref: MediaRef, file: FetchedMedia, label: string, options: MediaForAgentOptions): Promise<string> {
  let text = options.store.derived(sessionId, ref, 'transcript');
  if (text === undefined) {
    if (!options.speech) return `[${label}: not transcribed — no speech server is set up in Homing]`;
    const result = await transcribe({ path: file.path, mime: file.mime, ...(ref.name ? { name: ref.name } : {}) }, options.speech, { signal: options.signal });
    if (!result.ok) {
      options.logger.warn('a voice note could not be transcribed', { sessionId, error: result.error });
      return `[${label}: could not be transcribed — ${result.error}]`;
    }
    text = result.text.trim();
    options.store.saveDerived(sessionId, ref, 'transcript', text);
  }
  return transcriptWords(label, text);
}

/** How a transcript reaches the agent, marked as one. */
function transcriptWords(label: string, text: string): string {
  return text === '' ? `[${label}: transcribed, no speech heard]` : `[transcript of the ${label}]: ${text}`;
}

/**
 * The transcripts kept for an earlier message's voice notes and audio, as the
 * agent was shown them when it answered that message: later turns see what
 * was said in them too (a photo or a document is not shown again).
 */
export function keptTranscripts(store: MediaStore, sessionId: string, refs: readonly MediaRef[]): string[] {
  const lines: string[] = [];
  for (const ref of refs) {
    if (ref.kind !== 'voice' && ref.kind !== 'audio') continue;
    const text = store.derived(sessionId, ref, 'transcript');
    if (text !== undefined) lines.push(transcriptWords(labelOf(ref), text));
  }
  return lines;
}

async function documentLine(sessionId: string, ref: MediaRef, file: FetchedMedia, label: string, charsLeft: number, options: MediaForAgentOptions): Promise<string> {
  let text = options.store.derived(sessionId, ref, 'text');
  if (text === undefined) {
    const found = await documentText(file.path, { mime: file.mime, ...(ref.name ? { name: ref.name } : {}) }, options.limits.documentChars);
    if (found.kind === 'none') return `[${label}, ${formatBytes(file.size)}: its content cannot be shown to you — ${found.why}]`;
    text = found.text;
    options.store.saveDerived(sessionId, ref, 'text', text);
  }
  if (charsLeft <= 0) return `[${label}, ${formatBytes(file.size)}: its text is not shown — the message's other documents used the budget]`;
  const cut = text.length > charsLeft;
  const shown = cut ? text.slice(0, charsLeft) : text;
  return `[text of the ${label}${cut ? `, cut to its first ${charsLeft} characters` : ''}]:\n${shown}`;
}
