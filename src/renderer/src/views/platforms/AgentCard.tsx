import { useState, type ReactNode } from 'react';
import type { ConfigView, GatewayOverview, HomingApi } from '../../../../shared/api';
import { useGatewayEvents } from '../../hooks/useGatewayEvents';
import { useFocusBackOnClose } from './form-focus';
import { describeAgent } from './platform-list';
import { describeSpeech } from './speech-section';

interface AgentCardProps {
  readonly api: HomingApi;
  readonly view: ConfigView | null;
  readonly overview: GatewayOverview | null;
  readonly editing: boolean;
  readonly onEdit: () => void;
  /** Its form, when open. */
  readonly children?: ReactNode;
}

/**
 * The agent, first on Platforms and compact: which agent answers, whether it
 * is answering now or its last turn here failed, and Edit (its form opens in
 * the card).
 */
export function AgentCard({ api, view, overview, editing, onEdit, children }: AgentCardProps) {
  // The last turn's outcome while this view is open: the gateway keeps no agent state of its own to ask for.
  const [lastError, setLastError] = useState<string | null>(null);
  useGatewayEvents(api, (event) => {
    if (event.type !== 'turn.finished' || event.outcome === 'command' || event.outcome === 'cancelled') return;
    setLastError(event.outcome === 'agent-error' ? (event.error ?? 'no reason was given') : null);
  });
  const editButton = useFocusBackOnClose(editing);
  const agent = (view?.config as { agent?: { type?: string } } | undefined)?.agent;
  const running = overview?.turnsRunning ?? 0;
  const state = running > 0 ? 'answering' : lastError ? 'failing' : 'ready';
  return (
    <article className="card agent-card" aria-labelledby="agent-title" data-testid="agent-card">
      <header className="card-head">
        <span className="platform-icon" aria-hidden="true">
          ✦
        </span>
        <h3 id="agent-title">Agent</h3>
        <span className={`badge state-${state}`} data-testid="agent-state">
          {state}
        </span>
      </header>
      <p className="agent-line">{view ? describeAgent(agent) : '…'}</p>
      {agent?.type === 'openai' && (
        <p className="muted" data-testid="agent-key">
          API key: {view?.secretsSet.includes('agent.apiKey') ? 'set' : 'not set (fine for a local server)'}
        </p>
      )}
      {view && (
        <p className="muted" data-testid="speech-line">
          {describeSpeech((view.config as { speech?: unknown }).speech)}
        </p>
      )}
      {running > 0 && <p className="muted">Answering {running === 1 ? 'one conversation' : `${running} conversations`} now.</p>}
      {lastError && running === 0 && (
        <p className="error-note" role="status">
          The last turn failed: {lastError}
        </p>
      )}
      <div className="card-actions">
        <button type="button" ref={editButton} aria-label="Edit agent" aria-expanded={editing} onClick={onEdit} disabled={view === null}>
          Edit
        </button>
      </div>
      {children}
    </article>
  );
}
