import { describe, expect, it } from 'vitest';
import { MessageRefs } from './message-ref';

const line = { nick: 'alice', message: 'hi', tags: {} as Record<string, string> };

describe('MessageRefs', () => {
  it('uses the network message id when there is one', () => {
    expect(new MessageRefs(0).next({ ...line, tags: { msgid: 'abc' } }, 'alice')).toBe('msgid:abc');
  });

  it('gives a replayed server-time line the same ref, and a different line another', () => {
    const tags = { time: '2026-01-01T00:00:00.000Z' };
    const first = new MessageRefs(0).next({ ...line, tags }, '#c');
    expect(new MessageRefs(1).next({ ...line, tags }, '#c')).toBe(first);
    expect(new MessageRefs(0).next({ ...line, message: 'other', tags }, '#c')).not.toBe(first);
  });

  it('numbers untagged lines under an instance id that differs between instances', () => {
    const refs = new MessageRefs(1_000, () => 'aa');
    expect([refs.next(line, 'alice'), refs.next(line, 'alice')]).toEqual(['seq:rs-aa:1', 'seq:rs-aa:2']);
    expect(new MessageRefs(1_000).next(line, 'alice')).not.toBe(new MessageRefs(1_000).next(line, 'alice'));
  });
});
