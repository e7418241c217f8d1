import { ApiFailure, type ApiHandlers } from '../api/server';
import { MediaFetchError, type MediaOffer } from '../media/media';
import { labelOf } from '../media/media-for-agent';
import { UploadError, type LocalUploads } from '../media/local-uploads';
import type { LocalAdapter } from '../platforms/local/local-adapter';
import type { Pipeline } from './pipeline';

type LocalChatHandlers = Pick<ApiHandlers, 'sendLocalMessage' | 'cancelTurn' | 'uploadLocalFile'>;

export interface LocalChatDeps {
  readonly ready: Promise<void>;
  readonly local: LocalAdapter;
  readonly pipeline: Pick<Pipeline, 'cancel'>;
  /** Files the window sends with its messages (its attach button). */
  readonly uploads: LocalUploads;
  /** The largest file Homing takes (`media.maxFileMB`), in bytes. */
  readonly maxFileBytes: () => number;
}

/** The API's methods for the window's own chat: what it needs is the local adapter and the pipeline's turns. */
export function localChatApiHandlers(deps: LocalChatDeps): LocalChatHandlers {
  return {
    sendLocalMessage: async ({ text, clientMessageId, files }) => {
      await deps.ready;
      if (deps.local.state() !== 'connected') throw new ApiFailure('unavailable', 'the gateway is stopping');
      const media = (files ?? []).map((uploadId) => inWords(() => deps.uploads.offer(uploadId)));
      // A message of files alone says what it carries, as other platforms' do (`[photo]`).
      const said = text.trim() !== '' ? text : media.map((offer: MediaOffer) => `[${labelOf(offer)}]`).join(' ');
      const message = deps.local.receive(said, clientMessageId, media);
      return { messageRef: message.messageRef };
    },
    uploadLocalFile: async ({ uploadId, offset, dataBase64, name, mime, done }) => {
      await deps.ready;
      const received = inWords(() => deps.uploads.append({ uploadId, offset, data: Buffer.from(dataBase64, 'base64'), name, mime, done }, deps.maxFileBytes()));
      return { received };
    },
    cancelTurn: ({ sessionId }) => ({ cancelled: deps.pipeline.cancel(sessionId) }),
  };
}

/** An upload's mistake (a wrong offset, too large, unknown) as the API's bad request, in words. */
function inWords<T>(act: () => T): T {
  try {
    return act();
  } catch (error) {
    if (error instanceof UploadError || error instanceof MediaFetchError) throw new ApiFailure('bad-request', error.message);
    throw error;
  }
}
