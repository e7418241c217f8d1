import { describe, expect, it } from 'vitest';
import { systemClock } from '../clock';
import { EventBus } from '../events';
import { silentLogger, type Logger } from '../logger';
import type { GatewayEvent } from '../../../shared/api';
import type { AdapterEvent, AdapterState, PlatformAdapter } from './adapter';
import { ircIntake } from './irc/intake';
import { PlatformManager } from './manager';

/** Records what the manager asks of it; connects at once. */
class RecordingAdapter implements PlatformAdapter {
  readonly limits = { maxLength: 400, unit: 'bytes' as const };
  readonly idempotentSends = false;
  readonly intake = ircIntake;
  readonly calls: string[] = [];
  private current: AdapterState = 'disconnected';
  private readonly listeners = new Set<(event: AdapterEvent) => void>();

  constructor(readonly platform: string) {}

  state(): AdapterState {
    return this.current;
  }
  async connect(): Promise<void> {
    this.calls.push('connect');
    this.set('connected');
  }
  async disconnect(): Promise<void> {
    this.calls.push('disconnect');
    this.set('disconnected');
  }
  async probe(): Promise<void> {
    this.calls.push('probe');
  }
  async send(): Promise<never> {
    throw new Error('not used');
  }
  onEvent(listener: (event: AdapterEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(event: AdapterEvent): void {
    for (const listener of this.listeners) listener(event);
  }
  private set(state: AdapterState): void {
    this.current = state;
    this.emit({ type: 'state', state });
  }
}

function manager(logger: Logger = silentLogger) {
  const registered = new Set<string>();
  const bus = new EventBus(silentLogger);
  const platforms = new PlatformManager({
    bus,
    logger,
    clock: systemClock,
    onMessage: () => {},
    onConnected: (sender) => {
      registered.add(sender.name);
      return () => registered.delete(sender.name);
    },
  });
  return { platforms, registered, bus };
}

describe('pausing the platforms', () => {
  it('disconnects every platform but the local chat, and reconnects them on resume', async () => {
    const { platforms, registered } = manager();
    const local = new RecordingAdapter('local');
    const irc = new RecordingAdapter('irc');
    await platforms.apply(
      new Map([
        ['local', { fingerprint: 'local', create: () => local }],
        ['irc', { fingerprint: 'a', create: () => irc }],
      ]),
    );
    await Promise.resolve();
    expect([...registered].sort()).toEqual(['irc', 'local']);

    await platforms.setPaused(true);
    expect(irc.calls).toEqual(['connect', 'disconnect']);
    expect(local.calls).toEqual(['connect']);
    expect([...registered]).toEqual(['local']);

    // A resume from sleep while paused does not wake a paused platform.
    await platforms.probeAll();
    expect(irc.calls).toEqual(['connect', 'disconnect']);
    expect(local.calls).toEqual(['connect', 'probe']);

    await platforms.setPaused(false);
    await Promise.resolve();
    expect(irc.calls).toEqual(['connect', 'disconnect', 'connect']);
    expect([...registered].sort()).toEqual(['irc', 'local']);
  });

  it('does not connect a platform configured while paused until the resume', async () => {
    const { platforms } = manager();
    await platforms.setPaused(true);
    const irc = new RecordingAdapter('irc');
    await platforms.apply(new Map([['irc', { fingerprint: 'a', create: () => irc }]]));
    expect(irc.calls).toEqual([]);
    await platforms.setPaused(false);
    expect(irc.calls).toEqual(['connect']);
  });
});

describe('a platform that says messages may have been lost', () => {
  it('is logged, announced, and shown on its card to a window opened later', async () => {
    const warnings: string[] = [];
    const { platforms, bus } = manager({ ...silentLogger, warn: (message: string) => warnings.push(message) });
    const events: GatewayEvent[] = [];
    bus.on((event) => events.push(event));
    const telegram = new RecordingAdapter('telegram');
    await platforms.apply(new Map([['telegram', { fingerprint: 'a', create: () => telegram }]]));
    const text = 'Homing was away longer than Telegram keeps messages (24 hours): messages sent to it before that may be lost.';
    telegram.emit({ type: 'intake-gap', text });

    expect(warnings).toEqual([`telegram: ${text}`]);
    expect(events.filter((event) => event.type === 'platform.notice')).toEqual([{ type: 'platform.notice', platform: 'telegram', text, at: expect.any(Number) }]);
    // A later state change keeps the notice on the card.
    await platforms.reconnect('telegram');
    const card = platforms.status('telegram');
    expect(card?.notice?.text).toBe(text);
  });
});
