import type { ApiError, HomingApi } from '../../shared/api';

/** A conversation's file as the window keeps it: its bytes in a Blob of the type they showed. */
export type FetchedMedia =
  | { readonly ok: true; readonly blob: Blob; readonly mime: string; readonly size: number; readonly inline: boolean }
  | { readonly ok: false; readonly error: ApiError };

/**
 * Files read this window's lifetime, by `<session>/<media>`, newest last. A Blob
 * is held by the browser, not the JS heap, but a long scroll through photos
 * must not keep them all: the oldest beyond the cap are dropped (an item still
 * on screen keeps its own object URL, so nothing it shows goes away).
 */
const cache = new Map<string, Promise<FetchedMedia>>();
const CACHE_CAP = 48;

/**
 * Files read at once: a screen of photos must not fill the connection's
 * allowance of waiting requests (the gateway answers `busy` beyond it), nor
 * have dozens of large answers in flight together.
 */
const MAX_READING = 3;
let reading = 0;
const waiting: (() => void)[] = [];

async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (reading >= MAX_READING) await new Promise<void>((resolve) => waiting.push(resolve));
  reading++;
  try {
    return await work();
  } finally {
    reading--;
    waiting.shift()?.();
  }
}

/** One file of a conversation, read once (a failure is not kept: the next look tries again). */
export function readMedia(api: HomingApi, sessionId: string, mediaId: string): Promise<FetchedMedia> {
  const key = `${sessionId}/${mediaId}`;
  const known = cache.get(key);
  if (known) {
    cache.delete(key);
    cache.set(key, known);
    return known;
  }
  const read = inTurn(() => api.getMedia({ sessionId, mediaId })).then((result): FetchedMedia => {
    if (!result.ok) {
      cache.delete(key);
      return { ok: false, error: result.error };
    }
    const { mime, size, inline, dataBase64 } = result.value;
    return { ok: true, blob: blobOfBase64(dataBase64, mime), mime, size, inline };
  });
  cache.set(key, read);
  for (const oldest of cache.keys()) {
    if (cache.size <= CACHE_CAP) break;
    cache.delete(oldest);
  }
  return read;
}

/** Bytes from base64 without a data: URL (the CSP lets the page fetch nothing but its own origin). */
export function blobOfBase64(base64: string, type: string): Blob {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return new Blob([bytes], { type });
}

/** Base64 of some bytes, built in runs (String.fromCharCode takes a bounded number of arguments). */
export function base64OfBytes(bytes: Uint8Array): string {
  let binary = '';
  const RUN = 0x8000;
  for (let start = 0; start < bytes.length; start += RUN) binary += String.fromCharCode(...bytes.subarray(start, start + RUN));
  return btoa(binary);
}
