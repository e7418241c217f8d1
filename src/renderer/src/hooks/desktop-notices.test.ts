import { describe, expect, it } from 'vitest';
import type { DeliveryRow, PairingRequest } from '../../../shared/api';
import { NoticeQueue, noticeForDelivery, noticesForPairing, pairingKey, type Notice, type NoticeTimers } from './desktop-notices';

const row = (changes: Partial<DeliveryRow>): DeliveryRow => ({
  id: 'a'.repeat(24),
  state: 'pending',
  platform: 'telegram',
  chatId: 'tg:1',
  threadId: null,
  sessionKey: 'telegram:direct:user_1',
  attempts: 1,
  chunksDelivered: 0,
  chunksTotal: 1,
  lastError: null,
  abandonReason: null,
  nextAttemptAt: null,
  createdAt: 0,
  updatedAt: 0,
  preview: 'hello',
  ...changes,
});

/** Timers the test moves by hand. */
function manualTimers(): NoticeTimers & { advance(ms: number): void } {
  let now = 0;
  let pending: { at: number; run: () => void } | null = null;
  return {
    now: () => now,
    setTimeout: (run, ms) => (pending = { at: now + ms, run }),
    clearTimeout: () => void (pending = null),
    advance(ms) {
      now += ms;
      if (pending && pending.at <= now) {
        const { run } = pending;
        pending = null;
        run();
      }
    },
  };
}

describe('what the headless window notifies about', () => {
  it('a reply refused for good, and one Homing gave up, in the window’s words, leading to its conversation', () => {
    const refused = noticeForDelivery(row({ state: 'failed', nextAttemptAt: null, lastError: 'permanent: Bad Request: chat not found' }));
    expect(refused).toMatchObject({ title: 'Needs you: a reply on Telegram was refused for good', target: { kind: 'conversation', sessionKey: 'telegram:direct:user_1' } });
    expect(refused!.body).toMatch(/^Telegram refused it for good: Bad Request: chat not found\. Retry once/);
    const abandoned = noticeForDelivery(row({ state: 'abandoned', attempts: 5, abandonReason: 'attempt cap reached' }));
    expect(abandoned?.title).toBe('Given up: Homing stopped sending a reply on Telegram');
  });

  it('not a reply still being tried, delivered, or discarded by the user', () => {
    expect(noticeForDelivery(row({ state: 'failed', nextAttemptAt: 5_000 }))).toBeNull();
    expect(noticeForDelivery(row({ state: 'attempting' }))).toBeNull();
    expect(noticeForDelivery(row({ state: 'delivered' }))).toBeNull();
    expect(noticeForDelivery(row({ state: 'abandoned', abandonReason: 'discarded by the user' }))).toBeNull();
  });

  it('pairing requests not seen before', () => {
    const request = (sender: string, name: string | null): PairingRequest => ({ platform: 'telegram', code: `CODE-${sender}`, name, sender, requestedAt: 0, told: true });
    const known = new Set([pairingKey(request('user_000000000001', 'Ann'))]);
    const notices = noticesForPairing([request('user_000000000001', 'Ann'), request('user_000000000002', null)], known);
    expect(notices).toEqual([
      {
        key: pairingKey(request('user_000000000002', null)),
        title: 'Someone asked to talk to your agent',
        body: 'On Telegram: approve or deny under Platforms.',
        target: { kind: 'pairing', platform: 'telegram' },
      },
    ]);
  });
});

describe('the notice queue', () => {
  const notice = (key: string): Notice => ({ key, title: `title ${key}`, body: '', target: { kind: 'deliveries' } });

  it('shows the first at once, then at most one per quiet interval, gathering what came meanwhile', () => {
    const timers = manualTimers();
    const shown: Notice[] = [];
    const queue = new NoticeQueue((shownNotice) => shown.push(shownNotice), timers, 30_000);
    queue.push(notice('a'));
    expect(shown.map((n) => n.title)).toEqual(['title a']);
    timers.advance(1_000);
    queue.push(notice('b'));
    queue.push(notice('c'));
    timers.advance(28_000);
    expect(shown).toHaveLength(1);
    timers.advance(1_000);
    expect(shown).toHaveLength(2);
    expect(shown[1]).toMatchObject({ title: '2 things need you in Homing', body: 'title b\ntitle c', target: { kind: 'deliveries' } });
  });

  it('shows each key once', () => {
    const timers = manualTimers();
    const shown: Notice[] = [];
    const queue = new NoticeQueue((shownNotice) => shown.push(shownNotice), timers, 30_000);
    queue.push(notice('a'));
    timers.advance(60_000);
    queue.push(notice('a'));
    timers.advance(60_000);
    expect(shown).toHaveLength(1);
  });

  it('drops what waits when disposed', () => {
    const timers = manualTimers();
    const shown: Notice[] = [];
    const queue = new NoticeQueue((shownNotice) => shown.push(shownNotice), timers, 30_000);
    queue.push(notice('a'));
    queue.push(notice('b'));
    queue.dispose();
    timers.advance(60_000);
    expect(shown).toHaveLength(1);
  });
});
