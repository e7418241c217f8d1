import { useEffect, useState, useSyncExternalStore } from 'react';
import type { GatewayEvent, HomingApi } from '../../../shared/api';
import { describeEvent, type Tone } from '../views/status/describe-event';
import { useGatewayEvents } from './useGatewayEvents';

export interface ActivityEntry {
  readonly n: number;
  readonly at: number;
  readonly text: string;
  readonly tone: Tone;
  /** How many times it happened in a row (a platform retrying: "Connecting… / not connected" again and again); absent: once. */
  readonly times?: number;
}

/** Repeats within this long fold into the entry they repeat. */
export const FOLD_WITHIN_MS = 10 * 60_000;

/** The last 500 entries, kept outside React state: an event re-renders only the list that shows them. */
export interface ActivityLog {
  entries(): readonly ActivityEntry[];
  subscribe(listener: () => void): () => void;
}

export const KEPT = 500;
const STORAGE_KEY = 'homing.activity';

/**
 * The activity log, in plain words, the last 500 entries kept across reloads
 * (in this window's storage: the tray window and each headless tab keep their
 * own). Lives in App, so switching views keeps it.
 */
export function useActivityLog(api: HomingApi): ActivityLog {
  const [log] = useState(() => createActivityLog(browserStorage()));
  useGatewayEvents(api, log.push);
  // A reload or a closed tab must not lose the last half second.
  useEffect(() => {
    window.addEventListener('pagehide', log.flush);
    return () => window.removeEventListener('pagehide', log.flush);
  }, [log]);
  return log;
}

/** The log's entries, newest first, for a component that shows them. */
export function useActivity(log: ActivityLog): readonly ActivityEntry[] {
  return useSyncExternalStore(log.subscribe, log.entries);
}

export interface EntryStorage {
  load(): readonly ActivityEntry[];
  save(entries: readonly ActivityEntry[]): void;
}

function browserStorage(): EntryStorage {
  return {
    load() {
      try {
        const parsed = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '[]') as unknown;
        if (!Array.isArray(parsed)) return [];
        return parsed.filter((entry): entry is ActivityEntry => typeof entry?.text === 'string' && typeof entry?.at === 'number').slice(0, KEPT);
      } catch {
        return [];
      }
    },
    save(entries) {
      try {
        localStorage.setItem(STORAGE_KEY, JSON.stringify(entries));
      } catch {
        // Storage full or switched off: the log lasts for this page only.
      }
    },
  };
}

export function createActivityLog(
  storage: EntryStorage,
  now: () => number = Date.now,
): ActivityLog & { push(event: GatewayEvent): void; flush(): void } {
  let entries: readonly ActivityEntry[] = storage.load();
  const listeners = new Set<() => void>();
  let saveTimer: ReturnType<typeof setTimeout> | undefined;
  return {
    push(event) {
      const described = describeEvent(event);
      if (!described) return;
      entries = withEntry(entries, { n: (entries[0]?.n ?? 0) + 1, at: now(), ...described }, event.type === 'platform.state');
      // A burst of events costs one write.
      saveTimer ??= setTimeout(() => {
        saveTimer = undefined;
        storage.save(entries);
      }, 500);
      for (const listener of listeners) listener();
    },
    flush() {
      if (saveTimer === undefined) return;
      clearTimeout(saveTimer);
      saveTimer = undefined;
      storage.save(entries);
    },
    entries: () => entries,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * The log with `entry` on top. A repeat of the newest entry is counted on it
 * instead of written again; a platform's state cycling (connecting, not
 * connected, connecting, …) repeats the entry before the newest: that one is
 * counted and comes back on top. Five retries a minute are two lines, not
 * ten a minute.
 */
function withEntry(entries: readonly ActivityEntry[], entry: ActivityEntry, cycles: boolean): readonly ActivityEntry[] {
  const repeats = (old: ActivityEntry | undefined): old is ActivityEntry =>
    old !== undefined && old.text === entry.text && old.tone === entry.tone && entry.at - old.at <= FOLD_WITHIN_MS;
  const counted = (old: ActivityEntry): ActivityEntry => ({ ...old, at: entry.at, times: (old.times ?? 1) + 1 });
  const [newest, before] = entries;
  if (repeats(newest)) return [counted(newest), ...entries.slice(1)];
  if (cycles && repeats(before)) return [counted(before), newest!, ...entries.slice(2)];
  return [entry, ...entries].slice(0, KEPT);
}
