import { useCallback, useEffect, useState } from 'react';
import type { HomingApi } from '../../shared/api';
import { ErrorNote } from './components/ErrorNote';
import { UpdateBanner } from './components/UpdateBanner';
import { ConnectionContext, isOnline, useConnectionState, type ConnectionMonitor } from './connection';
import { ConnectionStatus } from './ConnectionStatus';
import { useActivityLog } from './hooks/useActivity';
import { useApiRead } from './hooks/useApiRead';
import { useOverview } from './hooks/useOverview';
import { explainApiError, owedTotal } from './plain-words';
import { Summary } from './Summary';
import { ConversationsView } from './views/conversations/ConversationsView';
import { DeliveriesView } from './views/deliveries/DeliveriesView';
import { PlatformsView } from './views/platforms/PlatformsView';
import { StatusView } from './views/status/StatusView';

type ViewName = 'conversations' | 'deliveries' | 'platforms' | 'status';

/** Each view's name, and the shorter one a 360 px popover shows (screen readers always hear the full one). */
const VIEWS: readonly [ViewName, string, string][] = [
  ['conversations', 'Conversations', 'Chats'],
  ['deliveries', 'Deliveries', 'Deliveries'],
  ['platforms', 'Platforms', 'Platforms'],
  ['status', 'Status', 'Status'],
];

/** The nav badge stays small; its label says the exact number. */
function badgeText(count: number): string {
  return count > 999 ? '999+' : String(count);
}

/** The window: a summary line that answers "is anything owed?", four views, and the API passed in (Electron or browser alike). */
export function App({ api, connection }: { api: HomingApi; connection: ConnectionMonitor }) {
  return (
    <ConnectionContext.Provider value={connection}>
      <Window api={api} connection={connection} />
    </ConnectionContext.Provider>
  );
}

function Window({ api, connection }: { api: HomingApi; connection: ConnectionMonitor }) {
  const [view, setView] = useState<ViewName>('conversations');
  const state = useConnectionState(connection);
  const online = isOnline(state);
  // The data directory, for the "start it again with …" advice.
  const status = useApiRead(useCallback(() => api.getStatus(), [api]), 'status');
  useEffect(status.load, [status.load]);
  const [conversation, setConversation] = useState<string | null>(null);
  const [showingTranscript, setShowingTranscript] = useState(false);
  const overview = useOverview(api);
  const activity = useActivityLog(api);
  const owed = overview.overview ? owedTotal(overview.overview.deliveries) : 0;

  const openConversation = (sessionId: string | null) => {
    setConversation(sessionId);
    setShowingTranscript(true);
    setView('conversations');
  };

  return (
    <div className={`app${online ? '' : ' offline'}`}>
      <header className="app-header">
        <div className="title-row">
          <h1>Homing</h1>
          <ConnectionStatus state={state} mode={connection.mode} dataDir={status.value?.dataDir ?? null} />
        </div>
        <Summary overview={overview.overview} lastKnown={!online} onShowDeliveries={() => setView('deliveries')} />
      </header>
      <nav className="views-nav" aria-label="Views">
        {VIEWS.map(([name, label, short]) => (
          <button key={name} type="button" aria-current={view === name ? 'page' : undefined} onClick={() => setView(name)} data-view={name}>
            {short === label ? (
              label
            ) : (
              <>
                <span className="nav-label-long">{label}</span>
                <span className="nav-label-short" aria-hidden="true">
                  {short}
                </span>
              </>
            )}
            {name === 'deliveries' && owed > 0 && (
              <span className="nav-count" aria-label={`${owed} owed${online ? '' : ' (last known)'}`} data-testid="nav-owed">
                {badgeText(owed)}
              </span>
            )}
          </button>
        ))}
      </nav>
      <main className="app-main">
        <UpdateBanner update={overview.overview?.update} />
        {online ? (
          <ErrorNote message={overview.error && explainApiError('reach the gateway', overview.error)} />
        ) : (
          state.kind !== 'connecting' && (
            <p className="stale-note" data-testid="stale-note">
              Not connected: what you see is what Homing last knew, not what is true now. Actions come back when the gateway does.
            </p>
          )
        )}
        {view === 'conversations' && (
          <ConversationsView
            api={api}
            selected={conversation}
            showingTranscript={showingTranscript}
            onSelect={openConversation}
            onBack={() => setShowingTranscript(false)}
          />
        )}
        {view === 'deliveries' && <DeliveriesView api={api} overview={overview.overview} onOpenConversation={openConversation} />}
        {view === 'platforms' && <PlatformsView api={api} overview={overview.overview} />}
        {view === 'status' && <StatusView api={api} overview={overview.overview} activity={activity} />}
      </main>
    </div>
  );
}
