import { describe, expect, it } from 'vitest';
import { tickOf } from './DeliveryTick';

const row = (state: 'pending' | 'attempting' | 'delivered' | 'failed', extra: Partial<{ nextAttemptAt: number | null; chunksDelivered: number; chunksTotal: number }> = {}) => ({
  state,
  nextAttemptAt: null,
  abandonReason: null,
  chunksDelivered: 0,
  chunksTotal: 1,
  ...extra,
});

describe('a reply’s tick', () => {
  it('says a reply held by a platform that is away is waiting for it, not sending', () => {
    expect(tickOf(row('attempting'), 'IRC')).toEqual({ kind: 'waiting', label: '• waiting for IRC' });
    expect(tickOf(row('pending'), 'IRC')).toEqual({ kind: 'waiting', label: '• waiting for IRC' });
  });

  it('says sending (with its parts) while the platform is there, and never hides a settled reply', () => {
    expect(tickOf(row('attempting', { chunksDelivered: 1, chunksTotal: 3 }))).toEqual({ kind: 'sending', label: '↗ sending 1/3' });
    expect(tickOf(row('delivered'), 'IRC')).toEqual({ kind: 'delivered', label: '✓ delivered' });
    expect(tickOf(row('failed', { nextAttemptAt: 1 }), 'IRC').kind).toBe('retrying');
  });
});
