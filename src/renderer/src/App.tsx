import { useCallback, useEffect, useState } from 'react';
import type { HomingApi } from '../../shared/api';
import { ErrorNote } from './components/ErrorNote';
import { NotificationsToggle } from './components/NotificationsToggle';
import { ShortcutsDialog } from './components/ShortcutsDialog';
import { UpdateBanner } from './components/UpdateBanner';
import { ConnectionContext, isOnline, useConnectionState, type ConnectionMonitor } from './connection';
import { ConnectionStatus } from './ConnectionStatus';
import type { NoticeTarget } from './hooks/desktop-notices';
import { stepThrough, type ShortcutAction } from './hooks/shortcuts';
import { useActivityLog } from './hooks/useActivity';
import { useApiRead } from './hooks/useApiRead';
import { useDesktopNotifications } from './hooks/useDesktopNotifications';
import { NARROW, useMediaQuery } from './hooks/useMediaQuery';
import { useOverview } from './hooks/useOverview';
import { usePageVisible } from './hooks/usePageVisible';
import { useSessions } from './hooks/useSessions';
import { useShortcuts } from './hooks/useShortcuts';
import { tabTitle, unreadTotal, useUnread } from './hooks/useUnread';
import { explainApiError, owedTotal, platformLabel } from './plain-words';
import { Summary } from './Summary';
import { ConversationsView } from './views/conversations/ConversationsView';
import { DeliveriesView } from './views/deliveries/DeliveriesView';
import { PlatformsView } from './views/platforms/PlatformsView';
import { SchedulesView } from './views/schedules/SchedulesView';
import { rememberSetupClosed, useFirstRun } from './views/setup/first-run';
import { SetupFlow } from './views/setup/SetupFlow';
import { StatusView } from './views/status/StatusView';

type ViewName = 'conversations' | 'deliveries' | 'platforms' | 'schedules' | 'status';

/** Each view's name, and the shorter one a 360 px popover shows (screen readers always hear the full one). */
const VIEWS: readonly [ViewName, string, string][] = [
  ['conversations', 'Conversations', 'Chats'],
  ['deliveries', 'Deliveries', 'Deliveries'],
  ['platforms', 'Platforms', 'Platforms'],
  ['schedules', 'Schedules', 'Plans'],
  ['status', 'Status', 'Status'],
];

/** The nav badge stays small; its label says the exact number. */
function badgeText(count: number): string {
  return count > 999 ? '999+' : String(count);
}

/** The window: a summary line that answers "is anything owed?", five views, and the API passed in (Electron or browser alike). */
export function App({ api, connection }: { api: HomingApi; connection: ConnectionMonitor }) {
  return (
    <ConnectionContext.Provider value={connection}>
      <Window api={api} connection={connection} />
    </ConnectionContext.Provider>
  );
}

function Window({ api, connection }: { api: HomingApi; connection: ConnectionMonitor }) {
  const [view, setView] = useState<ViewName>('conversations');
  // The setup flow sits above the view it was opened in (the chat at first run; Platforms when
  // run again from there) until it is closed: the view under it stays usable, the others are as usual.
  const [setupIn, setSetupIn] = useState<ViewName | null>(null);
  const firstRun = useFirstRun(api);
  useEffect(() => {
    if (firstRun) setSetupIn('conversations');
  }, [firstRun]);
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
  const [showingShortcuts, setShowingShortcuts] = useState(false);
  /** An element to focus once the view it is in has rendered (a shortcut's target). */
  const [focusWanted, setFocusWanted] = useState<{ readonly selector: string } | null>(null);

  // The list lives here, not in its view: the tab's title counts unread messages whatever view shows.
  const list = useSessions(api);
  const localSession = list.sessions.find((session) => session.platform === 'local') ?? null;
  const session = (conversation ? list.sessions.find((candidate) => candidate.sessionId === conversation) : localSession) ?? null;
  const narrow = useMediaQuery(NARROW);
  const visible = usePageVisible();
  // Read while it is on screen: its view shows, on a narrow window its transcript (not the list), and the page is not in the background.
  const onScreen = visible && view === 'conversations' && (!narrow || showingTranscript) ? session : null;
  const unread = useUnread(list.sessions, onScreen?.sessionId ?? null);
  // A browser tab's title shows what waits unread; the tray app's window keeps its own title (the tray shows counts).
  const titleCount = connection.mode === 'headless' ? unreadTotal(unread) : 0;
  useEffect(() => {
    document.title = tabTitle(titleCount);
  }, [titleCount]);

  // The open conversation's platform while it is away: a reply "being sent" to it is waiting for it.
  const sessionPlatform = session?.platform;
  const platformState = overview.overview?.platforms.find((platform) => platform.name === sessionPlatform)?.state;
  const waitingFor = sessionPlatform && sessionPlatform !== 'local' && platformState !== undefined && platformState !== 'connected' && platformState !== 'degraded' ? platformLabel(sessionPlatform) : undefined;

  const openConversation = (sessionId: string | null) => {
    setConversation(sessionId);
    setShowingTranscript(true);
    setView('conversations');
  };

  const openTarget = (target: NoticeTarget) => {
    switch (target.kind) {
      case 'conversation': {
        const listed = list.sessions.find((candidate) => candidate.sessionKey === target.sessionKey);
        if (listed) return openConversation(listed.sessionId);
        void api.findSession({ keyOrId: target.sessionKey }).then((found) => (found.ok ? openConversation(found.value.sessionId) : setView('deliveries')));
        return;
      }
      case 'pairing':
        return setView('platforms');
      case 'deliveries':
        return setView('deliveries');
    }
  };
  // A browser tab only: in the tray app the tray notifies.
  const notifications = useDesktopNotifications(api, {
    enabled: connection.mode === 'headless',
    lookingAt: onScreen?.sessionKey ?? null,
    onOpen: openTarget,
  });

  useShortcuts((action: ShortcutAction) => {
    switch (action) {
      case 'next-conversation':
      case 'previous-conversation': {
        // In the list's order; the local chat is listed first while it has no session yet.
        const order: (string | null)[] = [...(localSession ? [] : [null]), ...list.sessions.map((listed) => listed.sessionId)];
        const next = stepThrough(order, session?.sessionId ?? conversation, action === 'next-conversation' ? 1 : -1);
        if (next === undefined) return;
        const inList = document.activeElement?.closest('.conversation-list') != null;
        openConversation(next);
        // Keys pressed in the list stay there, on the conversation now open.
        if (inList && !narrow) setFocusWanted({ selector: '.conversation[aria-current="true"]' });
        return;
      }
      case 'write':
        openConversation(null);
        setFocusWanted({ selector: '#composer-input' });
        return;
      case 'search':
        setView('conversations');
        setShowingTranscript(false);
        setFocusWanted({ selector: '#conversation-search' });
        return;
      case 'help':
        setShowingShortcuts(true);
        return;
    }
  });
  useEffect(() => {
    if (!focusWanted) return;
    document.querySelector<HTMLElement>(focusWanted.selector)?.focus();
    setFocusWanted(null);
  }, [focusWanted]);

  return (
    <div className={`app${online ? '' : ' offline'}`}>
      <header className="app-header">
        <div className="title-row">
          <h1>Homing</h1>
          <ConnectionStatus state={state} mode={connection.mode} dataDir={status.value?.dataDir ?? null} />
          <span className="header-actions">
            <NotificationsToggle notifications={notifications} />
            <button
              type="button"
              className="header-action shortcuts-button"
              aria-label="Keyboard shortcuts"
              aria-haspopup="dialog"
              title="Keyboard shortcuts (?)"
              onClick={() => setShowingShortcuts(true)}
              data-testid="shortcuts-button"
            >
              ?
            </button>
          </span>
        </div>
        <Summary overview={overview.overview} lastKnown={!online} onShowDeliveries={() => setView('deliveries')} />
      </header>
      <nav className="views-nav" aria-label="Views">
        {VIEWS.map(([name, label, short]) => (
          <button
            key={name}
            type="button"
            aria-current={view === name ? 'page' : undefined}
            onClick={() => setView(name)}
            data-view={name}
          >
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
        {setupIn === view && (
          <SetupFlow
            api={api}
            onFinish={() => {
              rememberSetupClosed();
              setSetupIn(null);
              setView('conversations');
            }}
          />
        )}
        {view === 'conversations' && (
          <ConversationsView
            api={api}
            list={list}
            unread={unread}
            session={session}
            local={conversation === null || session?.platform === 'local'}
            showingTranscript={showingTranscript}
            onSelect={openConversation}
            onBack={() => setShowingTranscript(false)}
            waitingFor={waitingFor}
          />
        )}
        {view === 'deliveries' && <DeliveriesView api={api} overview={overview.overview} onOpenConversation={openConversation} />}
        {view === 'platforms' && <PlatformsView api={api} overview={overview.overview} onSetup={() => setSetupIn('platforms')} />}
        {view === 'schedules' && (
          <SchedulesView api={api} sessions={list.sessions} onOpenConversation={(sessionKey) => openTarget({ kind: 'conversation', sessionKey })} />
        )}
        {view === 'status' && <StatusView api={api} overview={overview.overview} activity={activity} />}
      </main>
      {showingShortcuts && <ShortcutsDialog onClose={() => setShowingShortcuts(false)} />}
    </div>
  );
}
