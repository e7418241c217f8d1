import { useCallback, useRef, useState } from 'react';
import type { HomingApi } from '../../../shared/api';
import { explainApiError } from '../plain-words';
import { newUploadId, uploadFile } from '../upload-file';

/** The most files one message takes (the API's `files` limit). */
export const MAX_FILES = 10;

/**
 * A file chosen for the next message. `chosen` until Send uploads it;
 * `uploaded` keeps its upload id, so a message that failed to send is sent
 * again without uploading its files again; `failed` says why in words.
 */
export interface Attachment {
  readonly key: number;
  readonly file: File;
  readonly state: 'chosen' | 'uploading' | 'uploaded' | 'failed';
  /** Bytes the gateway has, while uploading. */
  readonly sent: number;
  readonly uploadId: string | null;
  readonly error: string | null;
}

export interface Attachments {
  readonly list: readonly Attachment[];
  /** Why some files were not added (more than MAX_FILES), or null. */
  readonly note: string | null;
  add(files: Iterable<File>): void;
  remove(key: number): void;
  /** Takes away the files a message took (files added meanwhile stay for the next one). */
  sent(keys: readonly number[]): void;
  /** Uploads what is not uploaded yet, one file after the other: the upload ids and the files' keys, or null when one failed (said on its chip). */
  uploadAll(): Promise<{ ids: string[]; keys: number[] } | null>;
}

/** The files chosen for the local chat's next message (attach button and drag and drop), and their uploads. */
export function useAttachments(api: HomingApi): Attachments {
  const [list, setList] = useState<readonly Attachment[]>([]);
  const [note, setNote] = useState<string | null>(null);
  const nextKey = useRef(1);
  // The list as the last update left it: uploadAll reads it between awaits.
  const current = useRef(list);
  current.current = list;

  const update = useCallback((key: number, change: Partial<Attachment>) => {
    setList((previous) => previous.map((attachment) => (attachment.key === key ? { ...attachment, ...change } : attachment)));
  }, []);

  const add = useCallback((files: Iterable<File>) => {
    const chosen = [...files];
    const room = MAX_FILES - current.current.length;
    const added = chosen.slice(0, Math.max(0, room)).map((file): Attachment => ({ key: nextKey.current++, file, state: 'chosen', sent: 0, uploadId: null, error: null }));
    setNote(added.length < chosen.length ? `A message takes at most ${MAX_FILES} files: ${chosen.length - added.length} not added.` : null);
    if (added.length > 0) setList((previous) => [...previous, ...added]);
  }, []);

  const remove = useCallback((key: number) => {
    setNote(null);
    setList((previous) => previous.filter((attachment) => attachment.key !== key));
  }, []);

  const sent = useCallback((keys: readonly number[]) => {
    setNote(null);
    setList((previous) => previous.filter((attachment) => !keys.includes(attachment.key)));
  }, []);

  const uploadAll = useCallback(async (): Promise<{ ids: string[]; keys: number[] } | null> => {
    const ids: string[] = [];
    const keys: number[] = [];
    for (const attachment of current.current) {
      keys.push(attachment.key);
      if (attachment.state === 'uploaded' && attachment.uploadId) {
        ids.push(attachment.uploadId);
        continue;
      }
      // A failed upload starts over under a new id: the gateway's part of the old one is not trusted.
      const uploadId = newUploadId();
      update(attachment.key, { state: 'uploading', sent: 0, error: null });
      const result = await uploadFile(api, attachment.file, uploadId, (sent) => update(attachment.key, { sent }));
      if (!result.ok) {
        update(attachment.key, { state: 'failed', error: explainApiError(`upload ${attachment.file.name || 'the file'}`, result.error) });
        return null;
      }
      update(attachment.key, { state: 'uploaded', uploadId });
      ids.push(uploadId);
    }
    return { ids, keys };
  }, [api, update]);

  return { list, note, add, remove, sent, uploadAll };
}
