import { useEffect, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';

const CLOSED_KEY = 'homing.setup.closed';

/**
 * Whether the window opens on the setup flow: nobody has chosen an agent yet
 * (config.json names none) and the setup was not closed in this browser before.
 * Read once, when the window first reaches the gateway.
 */
export function needsSetup(view: Pick<ConfigView, 'written'>, closedBefore: boolean): boolean {
  const written = (view.written ?? {}) as Record<string, unknown>;
  return !closedBefore && written.agent === undefined;
}

export function useFirstRun(api: HomingApi): boolean {
  const [first, setFirst] = useState(false);
  useEffect(() => {
    let cancelled = false;
    void api.getConfig().then((result) => {
      if (!cancelled && result.ok) setFirst(needsSetup(result.value, setupClosedBefore()));
    });
    return () => {
      cancelled = true;
    };
  }, [api]);
  return first;
}

function setupClosedBefore(): boolean {
  try {
    return localStorage.getItem(CLOSED_KEY) === '1';
  } catch {
    return false;
  }
}

/** The setup was closed (finished or dismissed): the window opens on the chat from now on. */
export function rememberSetupClosed(): void {
  try {
    localStorage.setItem(CLOSED_KEY, '1');
  } catch {
    // Storage off: the setup may show again at the next start, which is harmless.
  }
}
