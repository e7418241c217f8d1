import { useEffect, useState } from 'react';
import type { ApiError, GatewayEvent, GatewayStatus, HomingApi } from '../../shared/api';
import { LocalChat } from './LocalChat';
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
      // Streamed tokens would flood the activity list; the chat shows them.
      if (event.type === 'turn.token') return;
      setEvents((previous) => [event, ...previous].slice(0, 50));
      if (event.type === 'gateway.state') refresh();
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
      <LocalChat api={api} />
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
    case 'delivery.changed':
      return `${event.delivery.platform} reply ${event.delivery.state} (${event.delivery.chunksDelivered}/${event.delivery.chunksTotal})`;
    case 'sweep.completed':
      return `claimed ${event.report.claimed}, still owed ${event.report.owed}`;
    case 'ledger.health':
      return event.health.ok ? 'ledger healthy' : `ledger failing: ${event.health.lastError ?? ''}`;
    case 'session.updated':
      return `${event.session.platform} conversation ${event.change}`;
    case 'turn.started':
      return `${event.platform}: the agent is answering`;
    case 'turn.token':
      return '';
    case 'turn.finished':
      return event.error ? `${event.outcome}: ${event.error}` : event.outcome;
    case 'reply.recorded':
      return `reply recorded in ${event.chunks} part${event.chunks === 1 ? '' : 's'}`;
    case 'platform.state':
      return `${event.platform.name} ${event.platform.state}${event.platform.error ? `: ${event.platform.error}` : ''}`;
    case 'config.changed':
      return event.error ? `configuration not applied: ${event.error}` : 'configuration applied';
    case 'gateway.resumed':
      return `resumed after ${Math.round(event.sleptMs / 1000)} s asleep`;
  }
}
