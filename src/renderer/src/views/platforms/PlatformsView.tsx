import { useRef, useState } from 'react';
import type { GatewayOverview, HomingApi } from '../../../../shared/api';
import { PLATFORM_INFO, platformInfo, type PlatformName } from '../../../../shared/platforms';
import { ErrorNote } from '../../components/ErrorNote';
import { useConfig } from '../../hooks/useConfig';
import { explainApiError } from '../../plain-words';
import { AddPlatform } from './AddPlatform';
import { AgentCard } from './AgentCard';
import { AgentForm } from './AgentForm';
import { PairingRequests, usePairing } from './PairingRequests';
import { addablePlatforms, hasPairing, isConfigured, listedPlatforms } from './platform-list';
import { LocalChatCard, PlatformCard } from './PlatformCard';
import { PlatformForm } from './PlatformForm';
import { removePlatform } from './remove-platform';
import { SpeechForm } from './SpeechForm';
import './platforms.css';

/** A form open on the list: the agent's, or a platform's (being edited, or added). */
type Opened = 'agent' | PlatformName;

/**
 * Platforms as a list you add to: the agent first (which, its state, Edit),
 * the local chat, a card per platform config.json has (state, last error,
 * Reconnect, Edit, Remove) with its pairing requests when it has some, and
 * "Add a platform". A fresh install lists only the agent and the local chat.
 */
export function PlatformsView({ api, overview, onSetup }: { api: HomingApi; overview: GatewayOverview | null; onSetup?: () => void }) {
  const config = useConfig(api);
  const view = config.view;
  const pairing = usePairing(api);
  const [opened, setOpened] = useState<ReadonlySet<Opened>>(() => new Set());
  const [removal, setRemoval] = useState<{ text: string; ok: boolean } | null>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const running = overview?.platforms ?? [];
  const local = running.find((platform) => platform.name === 'local');
  const listed = listedPlatforms(view?.config ?? null, running.filter((platform) => platform.name !== 'local'), opened);
  const open = (which: Opened) => setOpened((previous) => new Set(previous).add(which));
  const close = (which: Opened) =>
    setOpened((previous) => {
      const next = new Set(previous);
      next.delete(which);
      return next;
    });
  const toggle = (which: Opened) => (opened.has(which) ? close(which) : open(which));
  const remove = async (name: PlatformName) => {
    const label = platformInfo(name)?.label ?? name;
    setRemoval(null);
    const result = await removePlatform(api, view?.written, name, view?.secretsSet ?? []);
    if (result.removed) close(name);
    setRemoval(result.problem ? { text: result.problem, ok: false } : { text: `${label} is removed, with what the secret store held for it.`, ok: true });
    config.reload();
  };
  // Requests on a platform no longer on the list (removed since) still get their answer here.
  const unlisted = PLATFORM_INFO.map((info) => info.name).filter((name) => !listed.includes(name) && hasPairing(pairing.value, name));

  return (
    <section className="view platforms" aria-labelledby="platforms-title">
      <div className="view-head">
        <h2 id="platforms-title">Platforms and agent</h2>
        <p className="muted">Where your agent listens and answers. Settings are saved to config.json{view ? ` (${view.path})` : ''}; passwords and keys go to the secret store.</p>
        {onSetup && (
          <button type="button" className="link" onClick={onSetup} data-testid="run-setup">
            Run the setup again (agent, first platform, pairing)
          </button>
        )}
      </div>
      {view?.error && (
        <p role="alert" className="error-note" data-testid="config-error">
          config.json has an error, so the last good settings are in force: {view.error}. Fix it in an editor ({view.path}); or save a form below and choose to replace
          the file — it is copied to a timestamped backup first, and never overwritten without asking.
        </p>
      )}
      <AgentCard api={api} view={view} overview={overview} editing={opened.has('agent')} onEdit={() => toggle('agent')}>
        {view && opened.has('agent') && <AgentForm api={api} view={view} onSaved={config.reload} onClose={() => close('agent')} />}
        {view && opened.has('agent') && <SpeechForm api={api} view={view} onSaved={config.reload} />}
      </AgentCard>
      <ul className="platform-list" aria-label="Where your agent answers">
        {local && (
          <li className="platform-entry">
            <LocalChatCard status={local} />
          </li>
        )}
        {listed.map((name) => (
          <li key={name} className={opened.has(name) ? 'platform-entry open' : 'platform-entry'}>
            <PlatformCard
              api={api}
              name={name}
              status={running.find((platform) => platform.name === name)}
              view={view}
              editing={opened.has(name)}
              onEdit={() => toggle(name)}
              onRemove={() => void remove(name)}
            >
              {view && opened.has(name) && (
                <PlatformForm
                  api={api}
                  view={view}
                  platform={PLATFORM_INFO.find((info) => info.name === name)!}
                  onSaved={config.reload}
                  onClose={() => {
                    close(name);
                    // Cancel on a platform being added: its card goes, and focus goes back to where it came from.
                    if (!isConfigured(view.config, name)) addButton.current?.focus();
                  }}
                />
              )}
            </PlatformCard>
            <PairingRequests api={api} platform={name} pairing={pairing} />
          </li>
        ))}
      </ul>
      {unlisted.map((name) => (
        <PairingRequests key={name} api={api} platform={name} pairing={pairing} />
      ))}
      {removal && (
        <p role={removal.ok ? 'status' : 'alert'} className={removal.ok ? 'ok-note' : 'error-note'} data-testid="removal-message">
          {removal.text}
        </p>
      )}
      <AddPlatform
        choices={addablePlatforms(listed)}
        buttonRef={addButton}
        onChoose={(name) => {
          setRemoval(null);
          open(name);
        }}
      />
      <ErrorNote message={config.error && explainApiError('read the settings', config.error)} />
      <ErrorNote message={pairing.error && explainApiError('read the pairing requests', pairing.error)} />
    </section>
  );
}
