import type { DesktopNotifications } from '../hooks/useDesktopNotifications';

/** A label in full, and shorter on a 360 px window (screen readers always hear the full one). */
function Label({ full, short }: { full: string; short: string }) {
  return (
    <>
      <span className="label-wide">{full}</span>
      <span className="label-narrow" aria-hidden="true">
        {short}
      </span>
    </>
  );
}

/** The header's "Turn on notifications" (a browser tab only); nothing where there are none, or the browser said no. */
export function NotificationsToggle({ notifications }: { notifications: DesktopNotifications }) {
  switch (notifications.choice) {
    case 'unsupported':
    case 'denied':
      return null;
    case 'off':
      return (
        <button type="button" className="header-action" onClick={notifications.turnOn} data-testid="notifications-toggle">
          <Label full="Turn on notifications" short="Notify me" />
        </button>
      );
    case 'on':
      return (
        <button type="button" className="header-action" onClick={notifications.turnOff} data-testid="notifications-toggle">
          <Label full="Turn off notifications" short="Stop notifying" />
        </button>
      );
  }
}
