import { describe, expect, it } from 'vitest';
import { systemClock } from '../clock';
import { EventBus } from '../events';
import { silentLogger } from '../logger';
import type { AdapterEvent, AdapterState, PlatformAdapter } from './adapter';
import { INTAKE } from './intake';
import { PlatformManager } from './manager';

/** Records what the manager asks of it; connects at once. */
class RecordingAdapter implements PlatformAdapter {
  readonly limits = { maxLength: 400, unit: 'bytes' as const };
  readonly idempotentSends = false;
  readonly intake = INTAKE.irc;
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
  private set(state: AdapterState): void {
    this.current = state;
    for (const listener of this.listeners) listener({ type: 'state', state });
  }
}

function manager() {
  const registered = new Set<string>();
  const platforms = new PlatformManager({
    bus: new EventBus(silentLogger),
    logger: silentLogger,
    clock: systemClock,
    onMessage: () => {},
    onConnected: (sender) => {
      registered.add(sender.name);
      return () => registered.delete(sender.name);
    },
  });
  return { platforms, registered };
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
