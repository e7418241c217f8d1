import { describe, expect, it } from 'vitest';
import type { ApiParams, ApiResult } from '../../shared/api';
import { newUploadId, PIECE_BYTES, uploadFile } from './upload-file';

type Piece = ApiParams<'uploadLocalFile'>;

function bytesOf(base64: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
}

/** Takes pieces as the gateway does (each at the offset of the bytes received), and refuses beyond `limit`. */
function receiver(limit = Infinity) {
  const pieces: Piece[] = [];
  let received = 0;
  const api = {
    uploadLocalFile: async (piece: Piece): Promise<ApiResult<{ received: number }>> => {
      pieces.push(piece);
      if (piece.offset !== received) return { ok: false, error: { code: 'bad-request', message: `send from ${received}` } };
      const bytes = bytesOf(piece.dataBase64).length;
      if (received + bytes > limit) return { ok: false, error: { code: 'bad-request', message: 'too large (more than 1 MB; the limit is 1 MB)' } };
      received += bytes;
      return { ok: true, value: { received } };
    },
  };
  return { api, pieces, received: () => received };
}

function fileOf(size: number, name = 'photo.jpg', type = 'image/jpeg'): File {
  const bytes = new Uint8Array(size).map((_, index) => index % 251);
  return new File([bytes], name, { type });
}

describe('uploadFile', () => {
  it('sends a file in pieces of at most 512 KiB, each at the bytes received so far, the last one marked done', async () => {
    const { api, pieces, received } = receiver();
    const file = fileOf(PIECE_BYTES * 2 + 10);
    const progress: number[] = [];
    const result = await uploadFile(api, file, 'upload_12345678', (sent) => progress.push(sent));
    expect(result).toEqual({ ok: true, uploadId: 'upload_12345678' });
    expect(pieces.map((piece) => piece.offset)).toEqual([0, PIECE_BYTES, PIECE_BYTES * 2]);
    expect(pieces.map((piece) => piece.done ?? false)).toEqual([false, false, true]);
    expect(Math.max(...pieces.map((piece) => piece.dataBase64.length))).toBeLessThanOrEqual(700_000);
    expect(pieces.every((piece) => piece.name === 'photo.jpg' && piece.mime === 'image/jpeg')).toBe(true);
    expect(progress).toEqual([PIECE_BYTES, PIECE_BYTES * 2, PIECE_BYTES * 2 + 10]);
    expect(received()).toBe(file.size);
    const sent = new Uint8Array(await new Blob(pieces.map((piece) => bytesOf(piece.dataBase64))).arrayBuffer());
    expect(sent).toEqual(new Uint8Array(await file.arrayBuffer()));
  });

  it('sends an empty file as one empty piece, and names a nameless file "file" without a type', async () => {
    const { api, pieces } = receiver();
    expect((await uploadFile(api, fileOf(0, '', ''), 'upload_12345678', () => {})).ok).toBe(true);
    expect(pieces).toEqual([{ uploadId: 'upload_12345678', offset: 0, dataBase64: '', name: 'file', done: true }]);
  });

  it('stops at the first refusal and hands back its words', async () => {
    const { api, pieces } = receiver(PIECE_BYTES + 1);
    const result = await uploadFile(api, fileOf(PIECE_BYTES * 3), 'upload_12345678', () => {});
    expect(result).toEqual({ ok: false, error: { code: 'bad-request', message: 'too large (more than 1 MB; the limit is 1 MB)' } });
    expect(pieces).toHaveLength(2);
  });

  it('keeps a long name within 255 characters, its extension last', async () => {
    const { api, pieces } = receiver();
    await uploadFile(api, fileOf(3, `${'a'.repeat(300)}.pdf`, 'application/pdf'), 'upload_12345678', () => {});
    expect(pieces[0]?.name).toHaveLength(255);
    expect(pieces[0]?.name.endsWith('a.pdf')).toBe(true);
  });
});

describe('newUploadId', () => {
  it('is 32 hex characters, inside the API pattern', () => {
    expect(newUploadId()).toMatch(/^[0-9a-f]{32}$/);
    expect(newUploadId((bytes) => bytes.fill(255))).toBe('f'.repeat(32));
  });
});
