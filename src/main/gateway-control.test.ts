import { describe, expect, it } from 'vitest';
import type { ApiResult, SweepReport } from '../shared/api';
import { GatewayControl, type GatewayLink } from './gateway-control';

function link() {
  const calls: string[] = [];
  const report: SweepReport = { claimed: 0, abandoned: 0, pruned: 0, waitingForPlatform: 0, owed: 0 };
  const gateway: GatewayLink = {
    api: {
      setPaused: async (params) => {
        calls.push(`setPaused ${params.paused}`);
        return { ok: true, value: { paused: params.paused } };
      },
      sweepNow: async (): Promise<ApiResult<SweepReport>> => {
        calls.push('sweepNow');
        return { ok: true, value: report };
      },
    },
    post: (message) => calls.push(message.type === 'resume' ? `post resume ${message.sleptMs}` : `post ${message.type}`),
  };
  const paused: boolean[] = [];
  let shutdowns = 0;
  const control = new GatewayControl({
    link: gateway,
    onPausedChange: (value) => paused.push(value),
    onShutdown: () => shutdowns++,
    log: () => {},
  });
  return { control, calls, paused, shutdowns: () => shutdowns };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the gateway controls', () => {
  it('pauses the platforms on suspend; on resume reconnects them, then has the gateway probe and sweep', async () => {
    const { control, calls } = link();
    control.suspend();
    await settle();
    expect(calls).toEqual(['setPaused true']);
    control.resume(42_000);
    await settle();
    expect(calls).toEqual(['setPaused true', 'setPaused false', 'post resume 42000']);
  });

  it('keeps the user\'s Pause through a sleep', async () => {
    const { control, calls, paused } = link();
    await control.setPausedByUser(true);
    control.suspend();
    control.resume(1000);
    await settle();
    expect(calls).toEqual(['setPaused true', 'setPaused true', 'post resume 1000']);
    expect(paused).toEqual([true]);
    expect(control.paused).toBe(true);
  });

  it('sweeps when the network returns, and on Sweep now', async () => {
    const { control, calls } = link();
    control.sweep('network');
    await control.sweepNow();
    expect(calls).toEqual(['sweepNow', 'sweepNow']);
  });

  it('re-applies the pause to a restarted gateway process', async () => {
    const { control, calls } = link();
    await control.gatewayStarted();
    expect(calls).toEqual([]);
    await control.setPausedByUser(true);
    await control.gatewayStarted();
    expect(calls).toEqual(['setPaused true', 'setPaused true']);
  });

  it('hands a shutdown to the app', () => {
    const { control, shutdowns } = link();
    control.shutdown();
    expect(shutdowns()).toBe(1);
  });
});
