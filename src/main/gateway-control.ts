/**
 * The shell's side of the gateway's controls: the tray's Sweep now and Pause /
 * Resume, and the power events. The user's Pause and a suspend are kept apart,
 * so waking the machine never undoes a Pause the user chose. The API client (the
 * main process's own MessagePort to the gateway process) and the parent-port
 * messages are injected.
 */
import type { HomingApi, UpdateNotice } from '../shared/api';
import type { PowerActions } from './power';

/** Messages the main process sends the gateway process over its parent port (gateway-host.ts). */
export type HostMessage =
  | { readonly type: 'resume'; readonly sleptMs: number }
  | { readonly type: 'stop' }
  /** A newer release electron-updater found (or null): the gateway's overview carries it to the window. */
  | { readonly type: 'update'; readonly update: UpdateNotice | null };

export interface GatewayLink {
  readonly api: Pick<HomingApi, 'setPaused' | 'sweepNow'>;
  /** Posts to the running gateway process, if any. */
  post(message: HostMessage): void;
}

export interface GatewayControlOptions {
  readonly link: GatewayLink;
  /** The user's Pause changed (the tray redraws). */
  readonly onPausedChange: (paused: boolean) => void;
  /** The OS is shutting down. */
  readonly onShutdown: () => void;
  readonly log: (message: string) => void;
}

/** Why the shell asks for a sweep, as the log says it. */
const SWEEP_REASONS = { network: 'the network is back' } as const;

export class GatewayControl implements PowerActions {
  private userPaused = false;
  private asleep = false;

  constructor(private readonly options: GatewayControlOptions) {}

  get paused(): boolean {
    return this.userPaused;
  }

  /** The tray's Pause / Resume gateway. */
  async setPausedByUser(paused: boolean): Promise<void> {
    this.userPaused = paused;
    this.options.onPausedChange(paused);
    if (this.asleep) return;
    const result = await this.options.link.api.setPaused({ paused });
    if (!result.ok) this.options.log(`pausing the gateway failed: ${result.error.message}`);
  }

  async sweepNow(): Promise<void> {
    const result = await this.options.link.api.sweepNow();
    if (!result.ok) this.options.log(`the sweep failed: ${result.error.message}`);
  }

  /** A (re)started gateway process starts unpaused: re-apply the pause. */
  async gatewayStarted(): Promise<void> {
    if (this.userPaused || this.asleep) await this.options.link.api.setPaused({ paused: true });
  }

  suspend(): void {
    this.asleep = true;
    this.options.log('suspending: pausing the chat platforms');
    void this.options.link.api.setPaused({ paused: true });
  }

  resume(sleptMs: number): void {
    this.asleep = false;
    this.options.log(`resumed after ${Math.round(sleptMs / 1000)} s: reconnecting and sweeping`);
    void (async () => {
      if (!this.userPaused) await this.options.link.api.setPaused({ paused: false });
      // The gateway probes every connection and sweeps (gateway-host.ts → Gateway.resumed).
      this.options.link.post({ type: 'resume', sleptMs });
    })();
  }

  sweep(reason: keyof typeof SWEEP_REASONS): void {
    this.options.log(`sweeping: ${SWEEP_REASONS[reason]}`);
    void this.sweepNow();
  }

  shutdown(): void {
    this.options.onShutdown();
  }
}
