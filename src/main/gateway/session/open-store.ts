import type { Clock } from '../clock';
import type { CommitGroup } from '../db/commit-group';
import type { Db } from '../db/database';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import type { ContinuationPolicy } from './continuation';
import { loadOrCreateInstallSecret } from './install-secret';
import { createPseudonymiser } from './pseudonyms';
import type { SessionKeyOptions } from './session-key';
import { SessionStore } from './store';

export interface OpenSessionStoreOptions {
  readonly db: Db;
  readonly dataDir: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly bus: EventBus;
  /** The pseudonym key when the tray app keeps it (safeStorage); else `<dataDir>/install-secret`. */
  readonly installSecret?: Uint8Array;
  readonly keys?: Omit<SessionKeyOptions, 'pseudonyms'>;
  readonly policy?: ContinuationPolicy;
  readonly group?: CommitGroup;
}

/** The gateway's session store, wired to the install's pseudonym key and the event bus. */
export function openSessionStore(options: OpenSessionStoreOptions): SessionStore {
  const secret = options.installSecret ?? loadOrCreateInstallSecret(options.dataDir);
  return new SessionStore({
    db: options.db,
    dataDir: options.dataDir,
    pseudonyms: createPseudonymiser(secret),
    clock: options.clock,
    logger: options.logger,
    onEvent: (event) => options.bus.emit(event),
    ...(options.keys ? { keys: options.keys } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.group ? { group: options.group } : {}),
  });
}
