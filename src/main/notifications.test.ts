import { describe, expect, it } from 'vitest';
import type { DeliveryRow, GatewayEvent } from '../shared/api';
import { Notifier, routeFor, type NotificationModel, type NotificationTarget } from './notifications';

function delivery(patch: Partial<DeliveryRow>): GatewayEvent {
  const row = {
    id: 'a'.repeat(24),
    state: 'attempting',
    platform: 'irc',
    chatId: 'irc:0123456789ab',
    threadId: null,
    sessionKey: 'agent:main:irc:group:x',
    attempts: 1,
    chunksDelivered: 0,
    chunksTotal: 3,
    lastError: null,
    abandonReason: null,
    nextAttemptAt: null,
    createdAt: 0,
    updatedAt: 0,
    preview: 'the reply',
    ...patch,
  } as DeliveryRow;
  return { type: 'delivery.changed', delivery: row, at: 0 };
}

function fakeNotifications(supported = true) {
  let now = 0;
  const timeouts: { at: number; callback: () => void }[] = [];
  const shown: { model: NotificationModel; click: () => void }[] = [];
  const opened: NotificationTarget[] = [];
  const notifier = new Notifier({
    surface: { isSupported: () => supported, show: (model, click) => shown.push({ model, click }) },
    open: (target) => opened.push(target),
    quietMs: 10_000,
    timers: { setTimeout: (callback, ms) => timeouts.push({ at: now + ms, callback }), now: () => now },
  });
  return {
    notifier,
    shown,
    opened,
    advance(ms: number) {
      now += ms;
      for (const timeout of timeouts.splice(0)) {
        if (timeout.at <= now) timeout.callback();
        else timeouts.push(timeout);
      }
    },
  };
}

describe('notifications', () => {
  it('tell of an abandoned reply once, and a click opens that delivery', () => {
    const electron = fakeNotifications();
    const abandoned = delivery({ state: 'abandoned', abandonReason: 'gave up after 5 attempts' });
    electron.notifier.handle(abandoned);
    electron.notifier.handle(abandoned);
    expect(electron.shown.map((entry) => entry.model)).toEqual([
      { title: 'A reply on irc was given up', body: 'gave up after 5 attempts', target: { kind: 'delivery', id: 'a'.repeat(24) } },
    ]);
    electron.shown[0]!.click();
    expect(electron.opened).toEqual([{ kind: 'delivery', id: 'a'.repeat(24) }]);
    expect(routeFor(electron.opened[0]!)).toBe(`#/deliveries/${'a'.repeat(24)}`);
  });

  it('tell of a permanent failure but not of a failure that is retried, nor of each chunk', () => {
    const electron = fakeNotifications();
    electron.notifier.handle(delivery({ state: 'attempting', chunksDelivered: 1 }));
    electron.notifier.handle(delivery({ state: 'attempting', chunksDelivered: 2 }));
    electron.notifier.handle(delivery({ state: 'failed', nextAttemptAt: 5_000, lastError: 'timeout' }));
    expect(electron.shown).toEqual([]);
    electron.notifier.handle(delivery({ state: 'failed', nextAttemptAt: null, lastError: 'the channel is gone' }));
    expect(electron.shown.map((entry) => entry.model.title)).toEqual(['A reply on irc cannot be delivered']);
  });

  it('stay silent when the user discarded a reply', () => {
    const electron = fakeNotifications();
    electron.notifier.handle(delivery({ state: 'abandoned', abandonReason: 'discarded by the user' }));
    expect(electron.shown).toEqual([]);
  });

  it('tell of a failed login, again only after the platform logged in once more', () => {
    const electron = fakeNotifications();
    const failed: GatewayEvent = { type: 'platform.state', platform: { name: 'irc', state: 'auth-failed', error: 'wrong password' }, at: 0 };
    electron.notifier.handle(failed);
    electron.notifier.handle(failed);
    electron.advance(60_000);
    electron.notifier.handle({ type: 'platform.state', platform: { name: 'irc', state: 'connected', error: null }, at: 0 });
    electron.notifier.handle(failed);
    expect(electron.shown.map((entry) => entry.model)).toEqual([
      { title: 'Homing could not log in to irc', body: 'wrong password', target: { kind: 'platform', name: 'irc' } },
      { title: 'Homing could not log in to irc', body: 'wrong password', target: { kind: 'platform', name: 'irc' } },
    ]);
  });

  it('are rate-limited: what arrives in the quiet interval is shown together, and opens Deliveries', () => {
    const electron = fakeNotifications();
    electron.notifier.handle(delivery({ id: '1'.repeat(24), state: 'abandoned', abandonReason: 'stale' }));
    electron.notifier.handle(delivery({ id: '2'.repeat(24), state: 'abandoned', abandonReason: 'stale' }));
    electron.notifier.handle(delivery({ id: '3'.repeat(24), state: 'failed', nextAttemptAt: null }));
    expect(electron.shown).toHaveLength(1);
    electron.advance(9_999);
    expect(electron.shown).toHaveLength(1);
    electron.advance(1);
    expect(electron.shown).toHaveLength(2);
    expect(electron.shown[1]!.model).toMatchObject({ title: '2 things need your attention', target: { kind: 'deliveries' } });
    electron.shown[1]!.click();
    expect(routeFor(electron.opened[0]!)).toBe('#/deliveries');
  });

  it('show nothing where the desktop has no notifications', () => {
    const electron = fakeNotifications(false);
    electron.notifier.handle(delivery({ state: 'abandoned', abandonReason: 'stale' }));
    expect(electron.shown).toEqual([]);
  });
});
