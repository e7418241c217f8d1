import { afterEach, describe, expect, it } from 'vitest';
import { nodeChild } from './fixtures/child-process';
import { Supervisor, uncleanStop, type SupervisorState, type SupervisorStatus } from './supervisor';
import { isAlive } from '../../test/support/processes';

const LIVE = 'setInterval(() => {}, 1000)';
const CRASHING = 'process.exit(3)';


/** Collects status changes and waits for a given state. */
function recorder() {
  const seen: SupervisorStatus[] = [];
  const waiters: { state: SupervisorState; after: number; resolve: (status: SupervisorStatus) => void }[] = [];
  return {
    seen,
    onStatus(status: SupervisorStatus) {
      seen.push(status);
      for (const waiter of [...waiters]) {
        if (status.state === waiter.state && seen.length > waiter.after) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(status);
        }
      }
    },
    next(state: SupervisorState): Promise<SupervisorStatus> {
      return new Promise((resolve) => waiters.push({ state, after: seen.length, resolve }));
    },
  };
}

describe('Supervisor with real child processes', () => {
  let supervisor: Supervisor | undefined;
  afterEach(async () => {
    await supervisor?.stop();
  });

  it('restarts a gateway child killed with SIGKILL', async () => {
    const events = recorder();
    supervisor = new Supervisor({ start: () => nodeChild(LIVE), onStatus: events.onStatus, initialBackoffMs: 20 });
    const firstRunning = events.next('running');
    supervisor.start();
    const first = await firstRunning;
    expect(first.pid).toBeTypeOf('number');

    const restarting = events.next('restarting');
    const secondRunning = events.next('running');
    process.kill(first.pid!, 'SIGKILL');
    expect(await restarting).toMatchObject({ crashes: 1, lastExit: { signal: 'SIGKILL' } });
    const second = await secondRunning;
    expect(second.pid).not.toBe(first.pid);
    expect(isAlive(second.pid!)).toBe(true);
  });

  it('backs off exponentially between restarts', async () => {
    const events = recorder();
    supervisor = new Supervisor({
      start: () => nodeChild(CRASHING),
      onStatus: events.onStatus,
      initialBackoffMs: 10,
      maxBackoffMs: 40,
      maxCrashes: 10,
      crashWindowMs: 60_000,
    });
    const fourth = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (events.seen.filter((status) => status.state === 'restarting').length >= 4) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });
    supervisor.start();
    await fourth;
    const delays = events.seen.filter((status) => status.state === 'restarting').map((status) => status.restartInMs);
    expect(delays.slice(0, 4)).toEqual([10, 20, 40, 40]);
  });

  it('gives up with a visible failed state after repeated crashes in a short time', async () => {
    const events = recorder();
    supervisor = new Supervisor({
      start: () => nodeChild(CRASHING),
      onStatus: events.onStatus,
      initialBackoffMs: 5,
      maxCrashes: 3,
      crashWindowMs: 60_000,
    });
    const failed = events.next('failed');
    supervisor.start();
    const status = await failed;
    expect(status).toMatchObject({ state: 'failed', crashes: 3, pid: undefined, lastExit: { code: 3 } });
    expect(supervisor.status().state).toBe('failed');
    // A manual restart after giving up starts it again.
    const running = events.next('running');
    supervisor.start();
    expect((await running).state).toBe('running');
  });

  it('stops the child on stop() and does not restart it', async () => {
    const events = recorder();
    supervisor = new Supervisor({ start: () => nodeChild(LIVE), onStatus: events.onStatus, initialBackoffMs: 5 });
    const running = events.next('running');
    supervisor.start();
    const { pid } = await running;
    // How it ended: whoever quits after the stop (an update's install) needs to know it was clean.
    expect(await supervisor.stop()).toMatchObject({ signal: 'SIGTERM' });
    expect(supervisor.status().state).toBe('stopped');
    expect(isAlive(pid!)).toBe(false);
    expect(events.seen.some((status) => status.state === 'restarting')).toBe(false);
  });

  it('stop() with nothing running resolves with no exit', async () => {
    supervisor = new Supervisor({ start: () => nodeChild(LIVE) });
    expect(await supervisor.stop()).toBeUndefined();
  });

  it('counts a start function that throws as a crash', async () => {
    const events = recorder();
    supervisor = new Supervisor({
      start: () => {
        throw new Error('no binary');
      },
      onStatus: events.onStatus,
      initialBackoffMs: 1,
      maxCrashes: 2,
    });
    const failed = events.next('failed');
    supervisor.start();
    expect((await failed).lastExit?.error).toBe('no binary');
  });
});

describe('uncleanStop', () => {
  it('accepts only an exit with code 0, or no process at all', () => {
    expect(uncleanStop(undefined)).toBeUndefined();
    expect(uncleanStop({ code: 0, signal: null, at: 1 })).toBeUndefined();
    expect(uncleanStop({ code: 1, signal: null, at: 1 })).toBe('the gateway process exited with code 1');
    expect(uncleanStop({ code: null, signal: 'SIGKILL', at: 1 })).toBe('the gateway process was killed (SIGKILL)');
  });
});
