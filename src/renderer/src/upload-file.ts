import type { ApiError, HomingApi } from '../../shared/api';
import { base64OfBytes } from './media-file';

/** A piece's bytes: 512 KiB, whose base64 (699 052 characters) fits the API's 700 000. */
export const PIECE_BYTES = 512 * 1024;

/** The longest file name the API takes. */
const MAX_NAME = 255;

export type UploadResult = { readonly ok: true; readonly uploadId: string } | { readonly ok: false; readonly error: ApiError };

/** An upload's id: random, in the API's `[A-Za-z0-9_-]{8,64}`. */
export function newUploadId(random: (bytes: Uint8Array) => Uint8Array = (bytes) => crypto.getRandomValues(bytes)): string {
  return Array.from(random(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * Sends one file to the gateway for the window's chat, piece by piece: only one
 * piece is read into memory at a time (`slice`), so a large file costs a piece,
 * not its size. The gateway counts it against its limit and says, in words,
 * when it refuses; the first refusal ends the upload.
 */
export async function uploadFile(
  api: Pick<HomingApi, 'uploadLocalFile'>,
  file: Pick<File, 'name' | 'type' | 'size' | 'slice'>,
  uploadId: string,
  onProgress: (sentBytes: number) => void,
): Promise<UploadResult> {
  const name = apiFileName(file.name);
  const mime = file.type && file.type.length <= MAX_NAME ? file.type : undefined;
  let offset = 0;
  for (;;) {
    const end = Math.min(offset + PIECE_BYTES, file.size);
    const done = end >= file.size;
    const bytes = new Uint8Array(await file.slice(offset, end).arrayBuffer());
    const result = await api.uploadLocalFile({
      uploadId,
      offset,
      dataBase64: base64OfBytes(bytes),
      name,
      ...(mime ? { mime } : {}),
      ...(done ? { done: true } : {}),
    });
    if (!result.ok) return { ok: false, error: result.error };
    offset = end;
    onProgress(offset);
    if (done) return { ok: true, uploadId };
  }
}

/** The name as the API takes it: never empty, at most 255 characters, its extension kept (the gateway's type check reads it). */
function apiFileName(name: string): string {
  if (name === '') return 'file';
  if (name.length <= MAX_NAME) return name;
  const extension = /\.[A-Za-z0-9]{1,10}$/.exec(name)?.[0] ?? '';
  return name.slice(0, MAX_NAME - extension.length) + extension;
}
