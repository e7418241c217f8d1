import { useEffect, useState } from 'react';
import type { ApiError, GatewayEvent, GatewayStatus, HomingApi } from '../../shared/api';
import { StatusCard } from './StatusCard';

type StatusView = { kind: 'loading' } | { kind: 'ready'; status: GatewayStatus } | { kind: 'error'; error: ApiError };

export function App({ api }: { api: HomingApi }) {
  const [view, setView] = useState<StatusView>({ kind: 'loading' });
  const [events, setEvents] = useState<GatewayEvent[]>([]);

  useEffect(() => {
    let alive = true;
    const refresh = () =>
      void api.getStatus().then((result) => {
        if (!alive) return;
        setView(result.ok ? { kind: 'ready', status: result.value } : { kind: 'error', error: result.error });
      });
    refresh();
    const timer = setInterval(refresh, 5_000);
    const unsubscribe = api.subscribe((event) => {
      setEvents((previous) => [event, ...previous].slice(0, 50));
      refresh();
    });
    return () => {
      alive = false;
      clearInterval(timer);
      unsubscribe();
    };
  }, [api]);

  return (
    <main className="app">
      <header className="app-header">
        <h1>Homing</h1>
        <p className="tagline">Your local assistant, on the chats you already use.</p>
      </header>
      {view.kind === 'loading' && <p role="status">Connecting to the gateway…</p>}
      {view.kind === 'error' && (
        <p role="alert" className="error">
          The gateway did not answer: {view.error.message}
        </p>
      )}
      {view.kind === 'ready' && <StatusCard status={view.status} />}
      <section aria-labelledby="activity-title" className="card">
        <h2 id="activity-title">Activity</h2>
        {events.length === 0 ? (
          <p className="muted">Nothing has happened since this window opened.</p>
        ) : (
          <ul className="events">
            {events.map((event, index) => (
              <li key={index}>
                <code>{event.type}</code> {describeEvent(event)}
              </li>
            ))}
          </ul>
        )}
      </section>
    </main>
  );
}

function describeEvent(event: GatewayEvent): string {
  switch (event.type) {
    case 'gateway.state':
      return `gateway ${event.state}`;
    default:
      return '';
  }
}
