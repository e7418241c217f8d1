import type { TranscriptPage } from '../../../shared/api';
import { ApiFailure, type ApiHandlers } from '../api/server';
import type { MediaStore } from '../media/media-store';
import { isSessionId } from './session-id';
import { SessionNotFoundError, type SessionReader } from './session-reader';

/** The window's session methods; params arrive validated by the API server. */
export function sessionApiHandlers(reader: () => SessionReader, media?: MediaStore): Pick<ApiHandlers, 'listSessions' | 'getTranscript' | 'findSession'> {
  return {
    listSessions: (params) => reader().list(params ?? {}),
    findSession: ({ keyOrId }) => {
      const session = reader().find(keyOrId);
      if (!session) throw new ApiFailure('not-found', 'no conversation for that key: it may have been removed');
      return session;
    },
    getTranscript: async (params) => {
      if (!isSessionId(params.sessionId)) throw new ApiFailure('bad-request', 'getTranscript: sessionId is not a session id');
      try {
        // Read in slices: a page of long messages is megabytes, and the gateway answers others meanwhile.
        const page = await reader().transcriptSliced(params.sessionId, params);
        return media ? withMediaStates(page, media) : page;
      } catch (error) {
        if (error instanceof SessionNotFoundError) throw new ApiFailure('not-found', error.message);
        throw error;
      }
    },
  };
}

/** A page's media as they stand: kept, expired, failed (and why) or not fetched yet, with a voice note's transcript once made. */
function withMediaStates(page: TranscriptPage, store: MediaStore): TranscriptPage {
  const sessionId = page.session.sessionId;
  return {
    ...page,
    messages: page.messages.map((message) =>
      message.role === 'user' && message.media
        ? {
            ...message,
            media: message.media.map((item) => {
              const state = store.state(sessionId, item);
              return { ...item, state, transcript: store.derived(sessionId, item, 'transcript') ?? null, error: state === 'failed' ? (store.failure(sessionId, item) ?? null) : null };
            }),
          }
        : message,
    ),
  };
}
