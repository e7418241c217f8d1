import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLineLogger, rateLimitedLogger } from './logger';

afterEach(() => {
  vi.useRealTimers();
});

describe('rateLimitedLogger', () => {
  it('writes a burst of each cause per window, counts the rest, and says how many when the window ends', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const log = rateLimitedLogger(createLineLogger({ level: 'debug', write: (line) => lines.push(line) }), { burst: 3, windowMs: 60_000 });
    for (let i = 0; i < 2_300; i++) log.warn('refused a WebSocket connection', { why: `attempt ${i}` });
    log.info('pairing: a new sender asked to talk to the agent', { sender: 'user_1' });
    expect(lines.filter((line) => line.includes('refused a WebSocket connection'))).toHaveLength(3);
    expect(lines.filter((line) => line.includes('pairing'))).toHaveLength(1);
    vi.advanceTimersByTime(60_000);
    expect(lines.at(-1)).toMatch(/WARN {2}refused a WebSocket connection \(2297 more like this in the last 60 s were not logged\) \{"suppressed":2297\}/);
    // A new window writes again; a quiet one says nothing more.
    log.warn('refused a WebSocket connection', { why: 'later' });
    vi.advanceTimersByTime(60_000);
    expect(lines.filter((line) => line.includes('refused a WebSocket connection'))).toHaveLength(5);
  });

  it('keeps causes apart by level and message, not by fields', () => {
    const lines: string[] = [];
    const log = rateLimitedLogger(createLineLogger({ level: 'debug', write: (line) => lines.push(line) }), { burst: 1 });
    log.warn('a', { n: 1 });
    log.warn('a', { n: 2 });
    log.error('a');
    log.warn('b');
    expect(lines.map((line) => line.slice(25))).toEqual(['WARN  a {"n":1}', 'ERROR a', 'WARN  b']);
  });
});
