import type { ApiError, DeliveryRow, GatewayOverview, PlatformStatus, UpdateNotice } from '../../shared/api';
import { platformInfo, platformInSentence } from '../../shared/platforms';

/** Whose move it is: the answer to "is it my fault, the platform's, or Homing's?". */
export type Blame = 'none' | 'you' | 'platform' | 'homing';

export interface Explanation {
  readonly blame: Blame;
  /** The row's kind in the one vocabulary: the "why" line starts with its label. */
  readonly kind: DeliveryKind;
  /** One sentence a newcomer understands. */
  readonly text: string;
}

/**
 * The window's one vocabulary for a reply's delivery, from the core's one
 * definition of owed (ledger/states.ts): waiting, sending and retrying are
 * owed (the Owed tab and tile); needs-you, given-up and discarded are settled
 * without being delivered (the Given up tab and tile). Badges, tiles, the
 * transcript's ticks and the "why" line all use these words.
 */
export type DeliveryKind = 'waiting' | 'sending' | 'retrying' | 'needs-you' | 'given-up' | 'discarded' | 'delivered';

export const KIND_LABEL: Record<DeliveryKind, string> = {
  waiting: 'Waiting',
  sending: 'Sending',
  retrying: 'Retrying',
  'needs-you': 'Needs you',
  'given-up': 'Given up',
  discarded: 'Discarded',
  delivered: 'Delivered',
};

export function deliveryKind(row: Pick<DeliveryRow, 'state' | 'nextAttemptAt' | 'abandonReason'>): DeliveryKind {
  switch (row.state) {
    case 'pending':
      return 'waiting';
    case 'attempting':
      return 'sending';
    case 'failed':
      return row.nextAttemptAt === null ? 'needs-you' : 'retrying';
    case 'abandoned':
      return isDiscarded(row) ? 'discarded' : 'given-up';
    case 'delivered':
      return 'delivered';
  }
}

/** The one place where ledger and adapter errors become plain words. */
/** Failed, and not retried by itself (blocked, chat gone): the user must act. */
export function failedForGood(row: Pick<DeliveryRow, 'state' | 'nextAttemptAt'>): boolean {
  return row.state === 'failed' && row.nextAttemptAt === null;
}

/** Given up because the user discarded it (not by the ledger's own rules). */
export function isDiscarded(row: Pick<DeliveryRow, 'abandonReason'>): boolean {
  return row.abandonReason?.startsWith('discarded') ?? false;
}

/**
 * Replies Homing still has to send: the ledger's one definition of owed
 * (pending, being sent, or failed with a retry scheduled), the same count the
 * CLI, the tray and the sweep give. Replies refused for good are given up, not
 * owed: they wait for the user, and are counted as such.
 */
export function owedTotal(counts: GatewayOverview['deliveries']): number {
  return counts.owed;
}

/** The Given up tab's rows (ledger/states.ts GIVEN_UP): failed for good, stopped trying, discarded. */
export function givenUpTotal(counts: GatewayOverview['deliveries']): number {
  return counts.failedPermanently + counts.abandoned + counts.discarded;
}

export function explainDelivery(row: DeliveryRow, platform: PlatformStatus | undefined): Explanation {
  const name = platformLabel(row.platform);
  const kind = deliveryKind(row);
  const say = (blame: Blame, text: string): Explanation => ({ blame, kind, text });
  switch (kind) {
    case 'delivered':
      return say('none', `Delivered to ${chatLabel(row)} on ${name}.`);
    case 'waiting':
    case 'sending':
      if (platform && platform.state !== 'connected') {
        return say(platformBlame(platform), `${name}: ${explainPlatform(platform)} It goes out once ${name} is back.`);
      }
      return kind === 'waiting'
        ? say('none', `Recorded; it is sent as soon as ${name} takes it.`)
        : say('none', `Sending now (${row.chunksDelivered} of ${row.chunksTotal} parts arrived).`);
    case 'retrying':
      return say(errorBlame(row.lastError), `${name} did not take it: ${errorWords(row.lastError)} Homing tries again by itself.`);
    case 'needs-you':
      return say('you', `${name} refused it for good: ${errorWords(row.lastError)} Retry once that is fixed, or discard it.`);
    case 'discarded':
      return say('none', 'You discarded it: it will not be sent.');
    case 'given-up': {
      const reason = row.abandonReason ?? '';
      if (reason.startsWith('stale')) {
        return say('platform', `Homing stopped trying: ${name} could not be reached for a day, so the reply went stale. Retry to send it anyway.`);
      }
      const last = row.lastError ? ` The last error: ${errorWords(row.lastError)}` : '';
      return say(errorBlame(row.lastError), `Homing stopped trying after ${row.attempts} attempts.${last} Retry to try again.`);
    }
  }
}

/** A platform's state and last error, in words. */
export function explainPlatform(platform: PlatformStatus): string {
  switch (platform.state) {
    case 'connected':
      return 'connected.';
    case 'connecting':
      return 'connecting…';
    case 'degraded':
      return `connected, but not working well${platform.error ? ` (${errorWords(platform.error)})` : '.'}`;
    case 'auth-failed':
      return `${platformInfo(platform.name)?.loginRefused ?? 'the server refused the login: check the settings in Platforms.'}${platform.error ? ` (${platform.error})` : ''}`;
    case 'disconnected':
      return platform.error ? `not connected — ${errorWords(platform.error)}` : 'not connected.';
  }
}

function platformBlame(platform: PlatformStatus): Blame {
  return platform.state === 'auth-failed' ? 'you' : 'platform';
}

/** Rewrites raw adapter/ledger errors ("ECONNREFUSED 127.0.0.1:6667") into a sentence. */
export function errorWords(error: string | null): string {
  if (!error) return 'no reason was given.';
  const raw = error.replace(/^permanent:\s*/, '');
  const rules: [RegExp, (match: RegExpExecArray) => string][] = [
    [/ECONNREFUSED\s*([\w.:[\]-]*)/, (m) => `nothing answers at ${m[1] || 'the server'} (is the server running?).`],
    [/ENOTFOUND\s*([\w.-]*)/, (m) => `the server name ${m[1] || ''} does not exist (a typo, or no network).`],
    [/ETIMEDOUT|timed? ?out/i, () => 'the server took too long to answer.'],
    [/ECONNRESET|connection reset/i, () => 'the connection dropped while sending.'],
    // The IRC adapter's 401: "alice is not online: 401 alice No such nick or channel name".
    [/^(\S+) is not online\b/i, (m) => `${m[1]} is not online, so IRC cannot deliver it.`],
    [/no such nick(?::\s*(\S+))?/i, (m) => `${m[1] ? `${m[1]} is` : 'the recipient is'} not online, so IRC cannot deliver it.`],
    [/no such (channel|nick)/i, () => 'that chat does not exist.'],
    [/SQLITE_FULL|disk full|ENOSPC/i, () => 'the disk is full.'],
    [/SQLITE_BUSY|SQLITE_LOCKED|database is locked/i, () => 'the database was busy.'],
  ];
  for (const [pattern, words] of rules) {
    const match = pattern.exec(raw);
    if (match) return words(match);
  }
  return raw.endsWith('.') ? raw : `${raw}.`;
}

function errorBlame(error: string | null): Blame {
  if (!error) return 'platform';
  if (/SQLITE|ledger|ENOSPC/i.test(error)) return 'homing';
  if (/no such nick|not online|blocked|refused.*login/i.test(error)) return 'you';
  return 'platform';
}

/** An API call's error, with whose side it is on. */
export function explainApiError(action: string, error: ApiError): string {
  switch (error.code) {
    case 'disconnected':
    case 'timeout':
    case 'unavailable':
      // What to do about it depends on the mode; the header says it (ConnectionStatus).
      return `Could not ${action}: this window is not connected to Homing's gateway.`;
    case 'busy':
      return `Could not ${action}: Homing's gateway is busy with this window's other requests. Try again in a moment.`;
    case 'not-found':
      return `Could not ${action}: it is gone (${error.message}).`;
    case 'conflict':
      return `Could not ${action}: ${error.message}. The list has been refreshed.`;
    case 'bad-request':
      return `Could not ${action}: ${error.message}.`;
    case 'unknown-method':
      // An older gateway than this window: the method's name means nothing to a reader.
      return `Could not ${action}: the gateway is an older version than this window. Restart Homing.`;
    case 'internal':
      return `Could not ${action}: Homing failed (${error.message}). This is a bug in Homing.`;
  }
}

export function platformLabel(platform: string): string {
  return platformInSentence(platform);
}

export function chatLabel(row: Pick<DeliveryRow, 'platform' | 'chatId'>): string {
  return row.platform === 'local' ? 'you' : row.chatId;
}

/**
 * The update banner's sentence. The tray app downloads and installs (`ready`
 * is false while it downloads, true once it is downloaded); a headless
 * gateway only tells (`ready` absent): updating is up to whoever installed it.
 */
export function updateWords(update: UpdateNotice): string {
  const name = `Homing v${update.version}`;
  if (update.ready === true) return `${name} is ready: it is installed when Homing restarts (Restart to update in the tray menu, or the next time you quit).`;
  if (update.ready === false) return `${name} is available: it is downloading, and is installed when Homing restarts.`;
  return `${name} is available`;
}
