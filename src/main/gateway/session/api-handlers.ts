import { ApiFailure, type ApiHandlers } from '../api/server';
import { isSessionId } from './session-id';
import { SessionNotFoundError, type SessionReader } from './session-reader';

/** The window's session methods; params arrive validated by the API server. */
export function sessionApiHandlers(reader: () => SessionReader): Pick<ApiHandlers, 'listSessions' | 'getTranscript' | 'findSession'> {
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
        return await reader().transcriptSliced(params.sessionId, params);
      } catch (error) {
        if (error instanceof SessionNotFoundError) throw new ApiFailure('not-found', error.message);
        throw error;
      }
    },
  };
}
