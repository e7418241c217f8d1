import type { DeliveryRow, PairingRequest } from '../../../shared/api';
import { deliveryKind, explainDelivery, KIND_LABEL, platformLabel } from '../plain-words';

/**
 * What the headless window tells the desktop about, and how often. The tray
 * app notifies by itself (src/main/notifications.ts); a browser tab has only
 * this. The rule for replies is the tray's: a reply refused for good, or one
 * Homing gave up (never one the user discarded). Pairing requests too: someone
 * waits for an answer that only the owner can give.
 */

/** Where a click on a notice leads. */
export type NoticeTarget =
  | { readonly kind: 'conversation'; readonly sessionKey: string }
  | { readonly kind: 'pairing'; readonly platform: string }
  | { readonly kind: 'deliveries' };

export interface Notice {
  /** Once per key: a delivery changes many times (once per part), a notice is shown once. */
  readonly key: string;
  readonly title: string;
  readonly body: string;
  readonly target: NoticeTarget;
}

/** The notice a changed reply deserves, in the window's words (the "why" line of Deliveries); null for most changes. */
export function noticeForDelivery(row: DeliveryRow): Notice | null {
  const kind = deliveryKind(row);
  if (kind !== 'needs-you' && kind !== 'given-up') return null;
  const platform = platformLabel(row.platform);
  return {
    key: `delivery:${row.id}:${kind}`,
    title: kind === 'needs-you' ? `${KIND_LABEL[kind]}: a reply on ${platform} was refused for good` : `${KIND_LABEL[kind]}: Homing stopped sending a reply on ${platform}`,
    body: explainDelivery(row, undefined).text,
    target: { kind: 'conversation', sessionKey: row.sessionKey },
  };
}

export function pairingKey(request: Pick<PairingRequest, 'platform' | 'sender' | 'code'>): string {
  return `pairing:${request.platform}:${request.sender}:${request.code}`;
}

/** Notices for the requests not among `known` (the keys of those already seen). */
export function noticesForPairing(requests: readonly PairingRequest[], known: ReadonlySet<string>): Notice[] {
  return requests
    .filter((request) => !known.has(pairingKey(request)))
    .map((request) => ({
      key: pairingKey(request),
      title: `${request.name ?? 'Someone'} asked to talk to your agent`,
      body: `On ${platformLabel(request.platform)}: approve or deny under Platforms.`,
      target: { kind: 'pairing', platform: request.platform },
    }));
}

export interface NoticeTimers {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The shortest time between two desktop notifications, as the tray's. */
export const QUIET_MS = 30_000;

/**
 * At most one notification per quiet interval: what arrives meanwhile is shown
 * together when it ends (one "3 things need you"), never one per event. Each
 * key once for the page's life.
 */
export class NoticeQueue {
  private readonly shown = new Set<string>();
  private queued: Notice[] = [];
  private lastShownAt = -Infinity;
  private timer: unknown = undefined;

  constructor(
    private readonly show: (notice: Notice) => void,
    private readonly timers: NoticeTimers,
    private readonly quietMs = QUIET_MS,
  ) {}

  push(notice: Notice): void {
    if (this.shown.has(notice.key)) return;
    this.shown.add(notice.key);
    this.queued.push(notice);
    if (this.timer !== undefined) return;
    const wait = this.lastShownAt + this.quietMs - this.timers.now();
    if (wait <= 0) return this.flush();
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
  }

  /** Drops what waits (the page goes away, or notifications were turned off). */
  dispose(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.queued = [];
  }

  private flush(): void {
    const queued = this.queued;
    this.queued = [];
    if (queued.length === 0) return;
    this.lastShownAt = this.timers.now();
    this.show(queued.length === 1 ? queued[0]! : summary(queued));
  }
}

function summary(notices: readonly Notice[]): Notice {
  const pairing = notices.every((notice) => notice.target.kind === 'pairing');
  return {
    key: notices.map((notice) => notice.key).join('+'),
    title: `${notices.length} things need you in Homing`,
    body: notices.map((notice) => notice.title).join('\n'),
    // One place that lists them all: the pairing requests' platform, else Deliveries.
    target: pairing ? notices[0]!.target : { kind: 'deliveries' },
  };
}
