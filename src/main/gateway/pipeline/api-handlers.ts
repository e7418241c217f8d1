import { ApiFailure, type ApiHandlers } from '../api/server';
import type { LocalAdapter } from '../platforms/local/local-adapter';
import type { Pipeline } from './pipeline';

type LocalChatHandlers = Pick<ApiHandlers, 'sendLocalMessage' | 'cancelTurn'>;

/** The API's methods for the window's own chat: what it needs is the local adapter and the pipeline's turns. */
export function localChatApiHandlers(deps: { readonly ready: Promise<void>; readonly local: LocalAdapter; readonly pipeline: Pick<Pipeline, 'cancel'> }): LocalChatHandlers {
  return {
    sendLocalMessage: async ({ text, clientMessageId }) => {
      await deps.ready;
      if (deps.local.state() !== 'connected') throw new ApiFailure('unavailable', 'the gateway is stopping');
      const message = deps.local.receive(text, clientMessageId);
      return { messageRef: message.messageRef };
    },
    cancelTurn: ({ sessionId }) => ({ cancelled: deps.pipeline.cancel(sessionId) }),
  };
}
