import { describe, expect, it } from 'vitest';
import { PowerWatcher, type PowerActions, type PowerSurface, type PowerTimers } from './power';

type PowerEvent = Parameters<PowerSurface['on']>[0];

/** Electron's powerMonitor and net as the shell sees them, with time moved by hand. */
function fakeElectron() {
  const listeners = new Map<PowerEvent, (() => void)[]>();
  let online = true;
  let now = 1_000;
  let tick: (() => void) | undefined;
  const calls: string[] = [];
  const actions: PowerActions = {
    suspend: () => calls.push('suspend'),
    resume: (sleptMs) => calls.push(`resume ${sleptMs}`),
    sweep: (reason) => calls.push(`sweep ${reason}`),
    shutdown: () => calls.push('shutdown'),
  };
  const timers: PowerTimers = {
    setInterval: (callback) => (tick = callback),
    clearInterval: () => (tick = undefined),
    now: () => now,
  };
  const watcher = new PowerWatcher({
    power: { on: (event, listener) => listeners.set(event, [...(listeners.get(event) ?? []), listener]) },
    net: { isOnline: () => online },
    actions,
    timers,
  });
  return {
    watcher,
    calls,
    emit: (event: PowerEvent) => listeners.get(event)?.forEach((listener) => listener()),
    advance: (ms: number) => (now += ms),
    setOnline: (value: boolean) => (online = value),
    poll: () => tick?.(),
  };
}

describe('power and network events', () => {
  it('pauses the platforms on suspend, and reconnects and sweeps on resume with the time slept', () => {
    const electron = fakeElectron();
    electron.watcher.start();
    electron.emit('suspend');
    expect(electron.calls).toEqual(['suspend']);
    electron.advance(90_000);
    electron.emit('resume');
    expect(electron.calls).toEqual(['suspend', 'resume 90000']);
  });

  it('still reconnects and sweeps on a resume without a suspend event', () => {
    const electron = fakeElectron();
    electron.watcher.start();
    electron.emit('resume');
    expect(electron.calls).toEqual(['resume 0']);
  });

  it('sweeps when the network comes back, once', () => {
    const electron = fakeElectron();
    electron.watcher.start();
    electron.poll();
    electron.setOnline(false);
    electron.poll();
    electron.poll();
    expect(electron.calls).toEqual([]);
    electron.setOnline(true);
    electron.poll();
    electron.poll();
    expect(electron.calls).toEqual(['sweep network']);
  });

  it('leaves the sweep to the resume when the network returns during sleep', () => {
    const electron = fakeElectron();
    electron.watcher.start();
    electron.emit('suspend');
    electron.setOnline(false);
    electron.poll();
    electron.setOnline(true);
    electron.poll();
    electron.emit('resume');
    expect(electron.calls).toEqual(['suspend', 'resume 0']);
  });

  it('stops the gateway gracefully on shutdown and stops polling when stopped', () => {
    const electron = fakeElectron();
    electron.watcher.start();
    electron.emit('shutdown');
    expect(electron.calls).toEqual(['shutdown']);
    // Offline before stop, back online after: a running watcher would sweep now.
    electron.setOnline(false);
    electron.poll();
    electron.watcher.stop();
    electron.setOnline(true);
    electron.poll();
    expect(electron.calls).toEqual(['shutdown']);
  });
});
