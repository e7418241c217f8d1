import type { ConnectionState, WindowMode } from './connection';
import { clockTime } from './format';
import { useNow } from './hooks/useNow';

/** "connected", "reconnecting…", "gone": the header's answer to "is what I see current?". */
export function connectionLabel(state: ConnectionState, now: number): string {
  switch (state.kind) {
    case 'connecting':
      return 'Connecting…';
    case 'connected':
      return 'Connected';
    case 'reconnecting':
      return 'Reconnecting…';
    case 'gone':
      return state.nextTryAt === null ? 'Gateway gone' : `Gateway gone · ${nextTry(state.nextTryAt, now)}`;
    case 'refused':
      return 'Not connected';
  }
}

function nextTry(at: number, now: number): string {
  const seconds = Math.ceil((at - now) / 1000);
  return seconds <= 0 ? 'trying now' : `next try in ${seconds} s`;
}

/** What to do, in words, for this window's mode. */
export function connectionAdvice(state: ConnectionState, mode: WindowMode, dataDir: string | null): string | null {
  switch (state.kind) {
    case 'connecting':
    case 'connected':
      return null;
    case 'refused':
      return `This window cannot reach the gateway: ${state.reason}.`;
    case 'reconnecting':
    case 'gone': {
      const since = `Lost at ${clockTime(state.lostAt)}.`;
      if (mode === 'app') return `${since} Homing restarts its gateway by itself; this window reconnects when it is back.`;
      const command = `npx homing gateway${dataDir ? ` --data-dir ${quoteIfNeeded(dataDir)}` : ''}`;
      return `${since} The gateway stopped — start it again with \`${command}\`. This tab reconnects by itself, with the same address.`;
    }
  }
}

function quoteIfNeeded(path: string): string {
  return /^[\w./~:-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/** The header's connection badge and, while not connected, what to do about it. */
export function ConnectionStatus({ state, mode, dataDir }: { state: ConnectionState; mode: WindowMode; dataDir: string | null }) {
  // Re-renders each second while a next try is counted down; the time itself is read now.
  useNow(state.kind === 'gone' || state.kind === 'reconnecting' ? 1_000 : 60_000);
  const now = Date.now();
  const advice = connectionAdvice(state, mode, dataDir);
  return (
    <div className={`connection connection-${state.kind}`} data-testid="connection" data-state={state.kind}>
      <span className="connection-badge" role="status">
        <span className="connection-dot" aria-hidden="true" />
        {connectionLabel(state, now)}
      </span>
      {advice && (
        <p className="connection-advice" data-testid="connection-advice">
          {advice.split('`').map((part, index) => (index % 2 === 1 ? <code key={index}>{part}</code> : part))}
        </p>
      )}
    </div>
  );
}
