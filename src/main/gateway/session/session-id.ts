import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock';
import { isPathUnsafe } from './path-safety';

/**
 * Session ids are made by Homing, never taken from a platform: they name files.
 * `YYYYMMDD-HHMMSS-mmm-<10 hex>` in UTC sorts by creation time as plain text and
 * uses only [0-9a-f-], so it is safe as a file name everywhere.
 */
const SESSION_ID = /^\d{8}-\d{6}-\d{3}-[0-9a-f]{10}$/;

export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value) && !isPathUnsafe(value);
}

export type SessionIdSource = () => string;

export function createSessionIdSource(
  clock: Pick<Clock, 'now'>,
  random: (size: number) => Uint8Array = randomBytes,
): SessionIdSource {
  let last = -Infinity;
  return () => {
    // Never step back, so ids made by one source keep their creation order
    // even when the wall clock is set back.
    const at = Math.max(Math.floor(clock.now()), last);
    last = at;
    const iso = new Date(at).toISOString(); // 2026-01-30T10:11:12.123Z
    if (!/^\d{4}-/.test(iso)) throw new Error(`the clock is out of range: ${at}`);
    const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}-${iso.slice(20, 23)}`;
    return `${stamp}-${Buffer.from(random(5)).toString('hex')}`;
  };
}
