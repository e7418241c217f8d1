import { useCallback, useEffect, useRef, useState } from 'react';
import type { HomingApi } from '../../../shared/api';
import { useOnReconnect } from '../connection';
import { NoticeQueue, noticeForDelivery, noticesForPairing, pairingKey, type Notice, type NoticeTarget } from './desktop-notices';
import { useGatewayEvents } from './useGatewayEvents';
import { pageVisible } from './usePageVisible';

/**
 * `unsupported`: no desktop notifications here (the tray app notifies by
 * itself, or the browser has none); `denied`: the browser said no, and the
 * window asks no more; `off`: not turned on in this window; `on`.
 */
export type NotificationChoice = 'unsupported' | 'denied' | 'off' | 'on';

export interface DesktopNotifications {
  readonly choice: NotificationChoice;
  /** Asks the browser, so call it from the reader's click (browsers ignore a request without a user gesture). */
  turnOn(): void;
  turnOff(): void;
}

interface Options {
  /** Only a browser tab on the headless gateway notifies: in the tray app the tray does. */
  readonly enabled: boolean;
  /** The conversation (session key) the reader is looking at: nothing is said about it, it is on screen. */
  readonly lookingAt: string | null;
  readonly onOpen: (target: NoticeTarget) => void;
}

/** Remembered per window origin: the reader turned notifications on here. */
const PREF_KEY = 'homing.notifications';

function readPref(): boolean {
  try {
    return localStorage.getItem(PREF_KEY) === 'on';
  } catch {
    return false;
  }
}

function writePref(on: boolean): void {
  try {
    localStorage.setItem(PREF_KEY, on ? 'on' : 'off');
  } catch {
    // Storage switched off: the choice lasts for this page.
  }
}

function currentPermission(): NotificationPermission | null {
  return typeof Notification === 'function' ? Notification.permission : null;
}

const browserTimers = {
  now: () => Date.now(),
  setTimeout: (run: () => void, ms: number) => setTimeout(run, ms),
  clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Desktop notifications for the headless window: a reply that needs the reader
 * (refused for good, or given up) and a new pairing request, at most one per
 * quiet interval, never about the conversation on screen. Off until the reader
 * turns them on; the browser's permission is asked for at that click only.
 */
export function useDesktopNotifications(api: HomingApi, { enabled, lookingAt, onOpen }: Options): DesktopNotifications {
  const [permission, setPermission] = useState(currentPermission);
  const [wanted, setWanted] = useState(readPref);
  const choice: NotificationChoice = !enabled || permission === null ? 'unsupported' : permission === 'denied' ? 'denied' : permission === 'granted' && wanted ? 'on' : 'off';
  const on = choice === 'on';

  const latest = useRef({ lookingAt, onOpen });
  latest.current = { lookingAt, onOpen };

  // The browser's setting can change behind the window's back (site settings): follow it.
  useEffect(() => {
    if (!enabled || typeof navigator.permissions?.query !== 'function') return;
    let status: PermissionStatus | null = null;
    let gone = false;
    const update = () => setPermission(currentPermission());
    void navigator.permissions.query({ name: 'notifications' }).then(
      (found) => {
        if (gone) return;
        status = found;
        status.addEventListener('change', update);
      },
      () => {},
    );
    return () => {
      gone = true;
      status?.removeEventListener('change', update);
    };
  }, [enabled]);

  const queue = useRef<NoticeQueue | null>(null);
  useEffect(() => {
    if (!on) return;
    const show = (notice: Notice) => {
      try {
        // The tag: several tabs on one gateway show one notification, not one each.
        const shown = new Notification(notice.title, { body: notice.body, tag: `homing:${notice.key}` });
        shown.onclick = () => {
          window.focus();
          latest.current.onOpen(notice.target);
          shown.close();
        };
      } catch {
        // Some browsers allow notifications only from a service worker: there is nothing to show then.
      }
    };
    const created = new NoticeQueue(show, browserTimers);
    queue.current = created;
    return () => {
      created.dispose();
      if (queue.current === created) queue.current = null;
    };
  }, [on]);

  /** The pairing requests already known (null: not read yet); the first read only learns them. */
  const knownPairing = useRef<Set<string> | null>(null);
  const pairingReads = useRef(0);
  const checkPairing = useCallback(() => {
    const self = ++pairingReads.current;
    void api.listPairing().then((result) => {
      if (!result.ok || self !== pairingReads.current) return;
      const known = knownPairing.current;
      knownPairing.current = new Set(result.value.requests.map(pairingKey));
      if (known) for (const notice of noticesForPairing(result.value.requests, known)) queue.current?.push(notice);
    });
  }, [api]);
  useEffect(() => {
    knownPairing.current = null;
    if (on) checkPairing();
  }, [on, checkPairing]);
  // Requests that came while the connection was down are new too.
  useOnReconnect(() => {
    if (queue.current) checkPairing();
  });

  useGatewayEvents(api, (event) => {
    if (!queue.current) return;
    switch (event.type) {
      case 'delivery.changed': {
        const notice = noticeForDelivery(event.delivery);
        if (!notice) return;
        // On screen already: the reply's tick and its Retry are right there.
        if (pageVisible() && latest.current.lookingAt === event.delivery.sessionKey) return;
        queue.current.push(notice);
        return;
      }
      case 'pairing.changed':
        checkPairing();
        return;
      default:
        return;
    }
  });

  const turnOn = useCallback(() => {
    if (typeof Notification !== 'function') return;
    const asked = Notification.requestPermission();
    void asked.then((answer) => {
      setPermission(answer);
      if (answer === 'granted') {
        writePref(true);
        setWanted(true);
      }
    });
  }, []);
  const turnOff = useCallback(() => {
    writePref(false);
    setWanted(false);
  }, []);
  return { choice, turnOn, turnOff };
}
