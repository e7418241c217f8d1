import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

function parse(chunks: string[]): string[] {
  const events: string[] = [];
  const parser = new SseParser((data) => events.push(data));
  for (const chunk of chunks) parser.push(chunk);
  parser.end();
  return events;
}

describe('SseParser', () => {
  it('dispatches data events at blank lines, joining multi-line data with LF', () => {
    expect(parse(['data: a\n\ndata: b\ndata: c\n\n'])).toEqual(['a', 'b\nc']);
  });

  it('handles CRLF and CR line ends, even with the CRLF split across chunks', () => {
    expect(parse(['data: a\r', '\n\r', '\ndata: b\r\rdata:c\r\n\r\n'])).toEqual(['a', 'b', 'c']);
  });

  it('gives the same events however the stream is cut into chunks', () => {
    const stream = ': keep-alive\r\n\r\ndata: {"x":1}\r\n\r\nevent: ping\ndata: [DONE]\n\n';
    const whole = parse([stream]);
    expect(whole).toEqual(['{"x":1}', '[DONE]']);
    for (let i = 1; i < stream.length; i++) expect(parse([stream.slice(0, i), stream.slice(i)])).toEqual(whole);
    expect(parse([...stream])).toEqual(whole);
  });

  it('ignores comments and drops an event the stream never terminated', () => {
    expect(parse([':ping\n\n', 'data: done\n\n', 'data: cut off'])).toEqual(['done']);
  });
});
