/**
 * A response body as text, read only up to `maxBytes`: undefined once it is
 * larger (a declared Content-Length over the limit is not read at all; the rest
 * of a long body is cancelled). For every body a server we do not control sends:
 * a homeserver, a release feed, a model server on a port someone else may own.
 */
export async function readBodyLimited(
  response: { readonly headers?: Pick<Headers, 'get'>; readonly body: ReadableStream<Uint8Array> | null },
  maxBytes: number,
): Promise<string | undefined> {
  const declared = Number(response.headers?.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
