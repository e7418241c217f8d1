import type { ApiResult, HomingApi } from '../../../../shared/api';
import { isDiscarded, platformLabel } from '../../plain-words';

/** What "Retry all" for one platform would make owed again (discarded replies stay discarded). */
export interface RetryAllCounts {
  /** Failed, with a retry already scheduled: they are sent sooner. */
  readonly retrying: number;
  /** Settled without delivery (needs you, or Homing stopped trying): these come back to life. */
  readonly givenUp: number;
}

/** More given-up rows than this are counted as "at least". */
const MAX_PAGES = 40;

/**
 * Counts with the same reads the list makes: failed rows of the platform by
 * tab, and its abandoned rows page by page (discarded ones are left out, as
 * `retryDeliveries` leaves them alone).
 */
export async function countRetryAll(api: HomingApi, platform: string): Promise<ApiResult<RetryAllCounts>> {
  const retrying = await api.listDeliveries({ platform, state: 'failed', filter: 'owed' });
  if (!retrying.ok) return retrying;
  const needsYou = await api.listDeliveries({ platform, state: 'failed', filter: 'abandoned' });
  if (!needsYou.ok) return needsYou;
  let stopped = 0;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const rows = await api.listDeliveries({ platform, state: 'abandoned', page });
    if (!rows.ok) return rows;
    stopped += rows.value.deliveries.filter((row) => !isDiscarded(row)).length;
    if (!rows.value.hasMore) break;
  }
  return { ok: true, value: { retrying: retrying.value.total, givenUp: needsYou.value.total + stopped } };
}

export function replies(count: number): string {
  return `${count} repl${count === 1 ? 'y' : 'ies'}`;
}

/** The question the dialog asks, with the numbers. */
export function retryAllQuestion(platform: string, counts: RetryAllCounts): string {
  const parts: string[] = [];
  if (counts.retrying > 0) parts.push(`${replies(counts.retrying)} that Homing is retrying are tried now`);
  if (counts.givenUp > 0) parts.push(`${replies(counts.givenUp)} that had been given up are brought back and get fresh attempts`);
  return `${parts.join('; ')}. Each goes to ${platformLabel(platform)} again as soon as it is connected. Replies you discarded stay discarded.`;
}
