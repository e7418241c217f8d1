import { readFileSync } from 'node:fs';
import { ApiFailure, type ApiHandlers } from '../api/server';
import { isSessionId } from '../session/session-id';
import type { MediaStore } from './media-store';
import { isImageMime } from './mime';

/**
 * The largest file the window is handed through the API (larger ones stay in
 * the data directory, and the window says where). Its base64 answer (4/3 of it,
 * ~21 MB) stays well under what one WebSocket client may have waiting unread
 * before the headless server closes it (SEND_BUFFER_LIMITS.dropAbove, 32 MiB).
 */
export const MAX_MEDIA_SHOWN_BYTES = 16_000_000;

/** Audio the window may play in place: types its bytes showed (media/mime.ts). */
const PLAYABLE = new Set(['audio/ogg', 'audio/wav', 'audio/flac', 'audio/mpeg', 'audio/mp4']);

/**
 * The window's media method: a fetched file, behind the API's token like every
 * other method. The window shows it in place only when `inline` (an image or
 * audio its bytes confirmed — never SVG, HTML or anything a browser would run);
 * anything else it offers to save, as the declared type's bytes.
 */
export function mediaApiHandlers(store: MediaStore): Pick<ApiHandlers, 'getMedia'> {
  return {
    getMedia: ({ sessionId, mediaId }) => {
      if (!isSessionId(sessionId)) throw new ApiFailure('bad-request', 'getMedia: sessionId is not a session id');
      const file = store.fetched(sessionId, { id: mediaId });
      if (!file) {
        const state = store.state(sessionId, { id: mediaId });
        throw new ApiFailure('not-found', state === 'expired' ? 'this file expired: it was removed after the retention time (media.keepDays)' : 'this file is not kept (not fetched, or fetching it failed)');
      }
      if (file.size > MAX_MEDIA_SHOWN_BYTES) throw new ApiFailure('bad-request', `this file is too large to show here (${Math.round(file.size / 1e6)} MB); it is in the data directory's media folder`);
      return {
        mime: file.mime,
        size: file.size,
        name: null,
        inline: isImageMime(file.mime) || PLAYABLE.has(file.mime),
        dataBase64: readFileSync(file.path).toString('base64'),
      };
    },
  };
}
