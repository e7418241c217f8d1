/**
 * Desktop notifications for what the user must know: a reply abandoned, a reply
 * failed for good, a platform's login failed. One per delivery and state (a
 * delivery changes many times, once per chunk: never one per chunk), and at most
 * one notification per quiet interval: what arrives meanwhile is shown together
 * when the interval ends. A click opens that item in the window.
 */
import type { GatewayEvent } from '../shared/api';

/** Where a click leads: one delivery, the deliveries list, or a platform's settings. */
export type NotificationTarget =
  | { readonly kind: 'delivery'; readonly id: string }
  | { readonly kind: 'deliveries' }
  | { readonly kind: 'platform'; readonly name: string };

export interface NotificationModel {
  readonly title: string;
  readonly body: string;
  readonly target: NotificationTarget;
}

/** Electron's Notification as the shell uses it. */
export interface NotificationSurface {
  isSupported(): boolean;
  show(notification: NotificationModel, onClick: () => void): void;
}

export interface NotifierTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  now(): number;
}

export interface NotifierOptions {
  readonly surface: NotificationSurface;
  readonly open: (target: NotificationTarget) => void;
  /** The shortest time between two notifications. */
  readonly quietMs?: number;
  readonly timers?: NotifierTimers;
}

const realTimers: NotifierTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  now: () => Date.now(),
};

/** The notification an event deserves, with the key that makes it once-only; undefined for most events. */
export function notificationFor(event: GatewayEvent): { key: string; model: NotificationModel } | undefined {
  if (event.type === 'delivery.changed') {
    const delivery = event.delivery;
    const target: NotificationTarget = { kind: 'delivery', id: delivery.id };
    if (delivery.state === 'abandoned' && !/by the user/.test(delivery.abandonReason ?? '')) {
      return {
        key: `delivery:${delivery.id}:abandoned`,
        model: { title: `A reply on ${delivery.platform} was given up`, body: delivery.abandonReason ?? 'It could not be delivered.', target },
      };
    }
    if (delivery.state === 'failed' && delivery.nextAttemptAt === null) {
      return {
        key: `delivery:${delivery.id}:failed`,
        model: { title: `A reply on ${delivery.platform} cannot be delivered`, body: delivery.lastError ?? 'The platform refused it for good.', target },
      };
    }
    return undefined;
  }
  if (event.type === 'platform.state' && event.platform.state === 'auth-failed') {
    const { name, error } = event.platform;
    return {
      key: `platform:${name}:auth-failed`,
      model: { title: `Homing could not log in to ${name}`, body: error ?? 'Check the login in Settings.', target: { kind: 'platform', name } },
    };
  }
  return undefined;
}

export class Notifier {
  private readonly shown = new Set<string>();
  private queue: NotificationModel[] = [];
  private lastShownAt = -Infinity;
  private flushTimer: unknown;
  private readonly timers: NotifierTimers;
  private readonly quietMs: number;

  constructor(private readonly options: NotifierOptions) {
    this.timers = options.timers ?? realTimers;
    this.quietMs = options.quietMs ?? 30_000;
  }

  handle(event: GatewayEvent): void {
    // A platform that logs in again may fail again later, and that deserves a new notification.
    if (event.type === 'platform.state' && event.platform.state === 'connected') this.shown.delete(`platform:${event.platform.name}:auth-failed`);
    const found = notificationFor(event);
    if (!found || this.shown.has(found.key)) return;
    this.shown.add(found.key);
    this.queue.push(found.model);
    this.schedule();
  }

  private schedule(): void {
    if (this.flushTimer !== undefined) return;
    const wait = this.lastShownAt + this.quietMs - this.timers.now();
    if (wait <= 0) {
      this.flush();
      return;
    }
    this.flushTimer = this.timers.setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, wait);
  }

  private flush(): void {
    const queued = this.queue;
    this.queue = [];
    if (queued.length === 0 || !this.options.surface.isSupported()) return;
    const model: NotificationModel =
      queued.length === 1
        ? queued[0]!
        : { title: `${queued.length} things need your attention`, body: queued.map((item) => item.title).join('\n'), target: summaryTarget(queued) };
    this.lastShownAt = this.timers.now();
    this.options.surface.show(model, () => this.options.open(model.target));
  }
}

function summaryTarget(models: readonly NotificationModel[]): NotificationTarget {
  const platforms = models.filter((model) => model.target.kind === 'platform');
  return platforms.length === models.length ? platforms[0]!.target : { kind: 'deliveries' };
}

/** The window's route for a target (hash routing, the same build in Electron and headless). */
export function routeFor(target: NotificationTarget): string {
  switch (target.kind) {
    case 'delivery':
      return `#/deliveries/${encodeURIComponent(target.id)}`;
    case 'deliveries':
      return '#/deliveries';
    case 'platform':
      return `#/settings/platforms/${encodeURIComponent(target.name)}`;
  }
}
