import { join } from 'node:path';
import type { GatewayMode, GatewayState, GatewayStatus } from '../../shared/api';
import { ApiServer, type ApiHandlers } from './api/server';
import { systemClock, type Clock } from './clock';
import { ensureDataDir } from './data-dir';
import { deliveryApiHandlers } from './delivery/api-handlers';
import { DeliveryService } from './delivery/delivery-service';
import type { PlatformSender } from './delivery/sender';
import { openDatabase, type Db } from './db/database';
import { homingMigrations } from './db/migrations';
import { EventBus } from './events';
import type { Logger } from './logger';
import { sessionApiHandlers } from './session/api-handlers';
import { openSessionStore } from './session/open-store';
import type { SessionStore } from './session/store';

export interface GatewayOptions {
  readonly dataDir: string;
  readonly mode: GatewayMode;
  readonly version: string;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** The pseudonym key from safeStorage (tray app); without it, `<dataDir>/install-secret` is used. */
  readonly installSecret?: Uint8Array;
}

/**
 * The gateway core: owns the data directory, the database and the event bus, and
 * answers the API. It runs in a process of its own (a utilityProcess under the
 * tray app, plain Node in headless mode) and never imports electron.
 */
export class Gateway {
  readonly bus: EventBus;
  readonly api: ApiServer;
  readonly db: Db;
  readonly sessions: SessionStore;
  /** The delivery ledger, the send loop and the connected platforms. */
  readonly deliveries: DeliveryService;
  private state: GatewayState = 'starting';
  private readonly startedAt: number;
  private readonly startedMonotonic: number;
  private readonly clock: Clock;

  private constructor(
    private readonly options: GatewayOptions,
    db: Db,
  ) {
    this.clock = options.clock ?? systemClock;
    this.startedAt = this.clock.now();
    this.startedMonotonic = this.clock.monotonic();
    this.db = db;
    this.bus = new EventBus(options.logger);
    this.sessions = openSessionStore({
      db,
      dataDir: options.dataDir,
      clock: this.clock,
      logger: options.logger,
      bus: this.bus,
      ...(options.installSecret ? { installSecret: options.installSecret } : {}),
    });
    // Registers this process's ledger instance, starts its heartbeat and sweep
    // timers (unref'd) and sweeps once: what a crashed predecessor owed is found now.
    this.deliveries = DeliveryService.start({ db, clock: this.clock, logger: options.logger, bus: this.bus });
    this.api = new ApiServer(this.handlers(), this.bus, options.logger);
  }

  static start(options: GatewayOptions): Gateway {
    ensureDataDir(options.dataDir);
    const db = openDatabase(join(options.dataDir, 'homing.db'), { migrations: homingMigrations });
    let gateway: Gateway;
    try {
      gateway = new Gateway(options, db);
    } catch (error) {
      db.close();
      throw error;
    }
    gateway.setState('running');
    options.logger.info('gateway running', { dataDir: options.dataDir, mode: options.mode, pid: process.pid });
    return gateway;
  }

  getStatus(): GatewayStatus {
    return {
      version: this.options.version,
      mode: this.options.mode,
      state: this.state,
      dataDir: this.options.dataDir,
      pid: process.pid,
      startedAt: this.startedAt,
      uptimeMs: Math.max(0, Math.round(this.clock.monotonic() - this.startedMonotonic)),
    };
  }

  /**
   * The seam for platform adapters (issue 5): a connected adapter registers its
   * sender, which makes its platform deliverable and sweeps for what it is owed.
   * Returns the function to call when it disconnects.
   */
  registerPlatform(sender: PlatformSender): () => void {
    return this.deliveries.registerPlatform(sender);
  }

  stop(): void {
    if (this.state === 'stopped') return;
    this.setState('stopping');
    this.api.closeAll();
    this.deliveries.stop();
    this.db.close();
    this.setState('stopped');
    this.options.logger.info('gateway stopped');
  }

  private setState(state: GatewayState): void {
    this.state = state;
    this.bus.emit({ type: 'gateway.state', state, at: this.clock.now() });
  }

  private handlers(): ApiHandlers {
    return {
      getStatus: () => this.getStatus(),
      ...sessionApiHandlers(() => this.sessions),
      ...deliveryApiHandlers(() => this.deliveries),
    };
  }
}
