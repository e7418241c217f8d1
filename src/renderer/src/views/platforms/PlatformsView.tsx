import { Fragment } from 'react';
import type { GatewayOverview, HomingApi } from '../../../../shared/api';
import { PLATFORM_INFO } from '../../../../shared/platforms';
import { ErrorNote } from '../../components/ErrorNote';
import { useConfig } from '../../hooks/useConfig';
import { explainApiError } from '../../plain-words';
import { AgentForm } from './AgentForm';
import { PairingRequests } from './PairingRequests';
import { PlatformCard } from './PlatformCard';
import { PlatformForm } from './PlatformForm';

/** A card per platform (state, last error, reconnect, rooms), the forms for Telegram, Matrix, Discord, XMPP, IRC, email and the agent, and the pairing requests. */
export function PlatformsView({ api, overview }: { api: HomingApi; overview: GatewayOverview | null }) {
  const config = useConfig(api);
  const view = config.view;
  return (
    <section className="view platforms" aria-labelledby="platforms-title">
      <div className="view-head">
        <h2 id="platforms-title">Platforms and agent</h2>
        <p className="muted">Where your agent listens and answers. Settings are saved to config.json{config.view ? ` (${config.view.path})` : ''}; passwords and keys go to the secret store.</p>
      </div>
      {config.view?.error && (
        <p role="alert" className="error-note" data-testid="config-error">
          config.json has an error, so the last good settings are in force: {config.view.error}. Fix it in an editor ({config.view.path}); or save a form below and choose to
          replace the file — it is copied to a timestamped backup first, and never overwritten without asking.
        </p>
      )}
      <div className="cards">
        {(overview?.platforms ?? []).map((platform) => (
          <PlatformCard key={platform.name} api={api} platform={platform} />
        ))}
      </div>
      <ErrorNote message={config.error && explainApiError('read the settings', config.error)} />
      {view && (
        <div className="forms">
          {PLATFORM_INFO.map((platform) => (
            <Fragment key={platform.name}>
              <PlatformForm api={api} view={view} platform={platform} onSaved={config.reload} />
              {platform.pairing !== 'none' && <PairingRequests api={api} platform={platform.name} hideWhenEmpty={platform.pairing === 'opt-in'} />}
            </Fragment>
          ))}
          <AgentForm api={api} view={view} onSaved={config.reload} />
        </div>
      )}
    </section>
  );
}
