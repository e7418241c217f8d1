import type { DefaultRestOptions, ResponseLike } from '@discordjs/rest';

/** The most a Discord REST answer may weigh: 100 messages of 4000 characters are well below it. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

type MakeRequest = (url: string, init: Parameters<typeof DefaultRestOptions.makeRequest>[1]) => Promise<ResponseLike>;

/**
 * discord.js's own request strategy (`inner`, its DefaultRestOptions.makeRequest)
 * with a size limit: an answer (a hostile or broken server's) larger than
 * `maxBytes` is cut off and fails the call, instead of filling memory.
 */
export function boundedRequest(inner: MakeRequest, maxBytes = MAX_RESPONSE_BYTES): MakeRequest {
  return async (url, init) => {
    const response = await inner(url, init);
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > maxBytes) {
      await (response.body as ReadableStream | null)?.cancel().catch(() => undefined);
      throw new Error(`Discord's answer is too large (${declared} bytes)`);
    }
    if (!response.body) return response;
    const parts: Uint8Array[] = [];
    let size = 0;
    for await (const part of response.body as AsyncIterable<Uint8Array>) {
      size += part.byteLength;
      if (size > maxBytes) throw new Error(`Discord's answer is too large (over ${maxBytes} bytes)`);
      parts.push(part);
    }
    const body = Buffer.concat(parts);
    const nullBody = response.status === 204 || response.status === 304 || response.status === 101;
    return new Response(nullBody ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers as HeadersInit }) as unknown as ResponseLike;
  };
}
