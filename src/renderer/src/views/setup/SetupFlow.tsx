import { useCallback, useEffect, useState } from 'react';
import type { AgentServer, ConnectionTestResult, HomingApi } from '../../../../shared/api';
import { PLATFORM_INFO, type PlatformInfo, type PlatformName } from '../../../../shared/platforms';
import { useConfig } from '../../hooks/useConfig';
import { useGatewayEvents } from '../../hooks/useGatewayEvents';
import { explainApiError, platformLabel } from '../../plain-words';
import { PairingRequests, usePairing } from '../platforms/PairingRequests';
import { PlatformForm } from '../platforms/PlatformForm';
import './setup.css';

type Step = 'agent' | 'platform' | 'pair' | 'done';

const STEPS: readonly { readonly step: Step; readonly title: string }[] = [
  { step: 'agent', title: 'Your agent' },
  { step: 'platform', title: 'Your first platform' },
  { step: 'pair', title: 'Pair yourself' },
];

/** The chat platforms a user can add (the local chat is always there, and not among them). */
const CHOOSABLE: readonly (PlatformInfo & { readonly name: PlatformName })[] = PLATFORM_INFO;

/**
 * First run to the first answer on the phone: (1) the agent — the model
 * servers found on this machine, one test message and its answer; (2) the
 * first platform — its form, with its how-to, saved in one go; (3) pair
 * yourself — write to the bot, approve the request that appears, the first
 * answer arrives. Every step can be skipped, and it sits above the window's
 * views (the local chat among them), which stay usable: it never blocks anything.
 */
export function SetupFlow({ api, onFinish }: { api: HomingApi; onFinish: () => void }) {
  const [step, setStep] = useState<Step>('agent');
  const [platform, setPlatform] = useState<PlatformName | null>(null);
  const index = STEPS.findIndex((entry) => entry.step === step);
  return (
    <section className="setup card" aria-labelledby="setup-title">
      <header className="setup-header">
        <h2 id="setup-title">Set up Homing</h2>
        <button type="button" className="link" onClick={onFinish}>
          Close setup
        </button>
      </header>
      <ol className="setup-steps" aria-label="Steps">
        {STEPS.map((entry, at) => (
          <li key={entry.step} aria-current={entry.step === step ? 'step' : undefined} className={at < index || step === 'done' ? 'done' : ''}>
            {at + 1}. {entry.title}
          </li>
        ))}
      </ol>
      {step === 'agent' && <AgentStep api={api} onNext={() => setStep('platform')} />}
      {step === 'platform' && (
        <PlatformStep
          api={api}
          chosen={platform}
          onChoose={setPlatform}
          onNext={() => setStep(platform ? 'pair' : 'done')}
          onSkip={() => setStep('done')}
        />
      )}
      {step === 'pair' && platform && <PairStep api={api} platform={platform} onDone={() => setStep('done')} />}
      {step === 'done' && (
        <div className="setup-step">
          <h3>Done</h3>
          <p>
            Homing is set up. The local chat works from here; Platforms has everything you set here (and more), and can run this
            setup again.
          </p>
          <button type="button" onClick={onFinish}>
            Go to the chat
          </button>
        </div>
      )}
    </section>
  );
}

/** Step 1: the servers found on this machine and their models, a test message, and Use this. */
function AgentStep({ api, onNext }: { api: HomingApi; onNext: () => void }) {
  const config = useConfig(api);
  const [servers, setServers] = useState<readonly AgentServer[] | null>(null);
  const [searchError, setSearchError] = useState<string | null>(null);
  const [choice, setChoice] = useState<{ baseUrl: string; model: string } | null>(null);
  const [typedUrl, setTypedUrl] = useState('');
  const [typedModel, setTypedModel] = useState('');
  const [tried, setTried] = useState<ConnectionTestResult | null>(null);
  const [busy, setBusy] = useState<'search' | 'try' | 'save' | null>('search');
  const [saved, setSaved] = useState<string | null>(null);

  const search = useCallback(async () => {
    setBusy('search');
    setSearchError(null);
    const result = await api.findAgentServers();
    setBusy(null);
    if (!result.ok) return setSearchError(explainApiError('look for model servers', result.error));
    setServers(result.value.servers);
    const first = result.value.servers.find((server) => server.models.length > 0);
    if (first) setChoice((previous) => previous ?? { baseUrl: first.baseUrl, model: first.models[0]! });
  }, [api]);
  useEffect(() => void search(), [search]);

  const agent = choice ? { type: 'openai', baseUrl: choice.baseUrl, model: choice.model } : null;
  const tryIt = async () => {
    if (!agent) return;
    setBusy('try');
    setTried(null);
    const result = await api.testConnection({ target: 'agent', config: agent, turn: true });
    setBusy(null);
    setTried(result.ok ? result.value : { ok: false, message: explainApiError('try the agent', result.error) });
  };
  const use = async () => {
    const view = config.view;
    if (!agent || !view) return;
    setBusy('save');
    const written = (view.written ?? {}) as Record<string, unknown>;
    const result = await api.setConfig({ config: { ...written, agent } });
    setBusy(null);
    if (!result.ok) return setTried({ ok: false, message: explainApiError('save the agent', result.error) });
    setSaved(`${agent.model} at ${agent.baseUrl} answers your chats now.`);
  };

  return (
    <div className="setup-step" data-testid="setup-agent">
      <h3>1. Your agent</h3>
      <p className="muted">
        Homing answers with a model running on your machine. It looked for Ollama, LM Studio, llama.cpp and vLLM on their usual
        ports{busy === 'search' ? '…' : '.'}
      </p>
      {searchError && <p className="error">{searchError}</p>}
      {servers !== null && servers.length === 0 && (
        <p>
          None answers right now. Start one (for example <code>ollama serve</code>) and look again, or give its address below. Until
          then the built-in agent answers: it explains how to connect a real one.
        </p>
      )}
      {servers !== null && servers.length > 0 && (
        <fieldset className="setup-servers">
          <legend>Found on this machine</legend>
          {servers.map((server) =>
            server.models.length === 0 ? (
              <p key={server.baseUrl}>
                {server.name} at {server.baseUrl}: no model yet (download one first).
              </p>
            ) : (
              server.models.map((model) => (
                <label key={`${server.baseUrl} ${model}`} className="setup-choice">
                  <input
                    type="radio"
                    name="setup-agent"
                    checked={choice?.baseUrl === server.baseUrl && choice.model === model}
                    onChange={() => {
                      setChoice({ baseUrl: server.baseUrl, model });
                      setTried(null);
                      setSaved(null);
                    }}
                  />{' '}
                  {server.name}: {model}
                </label>
              ))
            ),
          )}
        </fieldset>
      )}
      <details className="setup-other">
        <summary>Another server</summary>
        <label>
          Server URL <input value={typedUrl} placeholder="http://127.0.0.1:11434/v1" onChange={(event) => setTypedUrl(event.target.value)} />
        </label>
        <label>
          Model <input value={typedModel} placeholder="llama3.2" onChange={(event) => setTypedModel(event.target.value)} />
        </label>
        <button
          type="button"
          disabled={typedUrl.trim() === '' || typedModel.trim() === ''}
          onClick={() => {
            setChoice({ baseUrl: typedUrl.trim(), model: typedModel.trim() });
            setTried(null);
            setSaved(null);
          }}
        >
          Choose this server
        </button>
        <p className="muted">A program or an ACP agent instead: Platforms → Agent → Edit.</p>
      </details>
      <div className="setup-actions">
        <button type="button" onClick={() => void search()} disabled={busy !== null}>
          Look again
        </button>
        <button type="button" onClick={() => void tryIt()} disabled={!agent || busy !== null}>
          {busy === 'try' ? 'Asking…' : 'Try it'}
        </button>
        <button type="button" onClick={() => void use()} disabled={!agent || busy !== null || tried?.ok !== true}>
          Use this agent
        </button>
      </div>
      {tried && (
        <div role="status" className={tried.ok ? 'setup-answer ok' : 'setup-answer error'}>
          <p>{tried.message}</p>
          {tried.answer !== undefined && <blockquote data-testid="setup-answer">{tried.answer}</blockquote>}
        </div>
      )}
      {saved && <p role="status" className="ok">Saved. {saved}</p>}
      <div className="setup-actions">
        <button type="button" className="primary" onClick={onNext}>
          {saved ? 'Next: your first platform' : 'Skip: keep the agent I have'}
        </button>
      </div>
    </div>
  );
}

/** Step 2: pick a platform; its own form (fields, how-to, Test connection), saved in one go. */
function PlatformStep({
  api,
  chosen,
  onChoose,
  onNext,
  onSkip,
}: {
  api: HomingApi;
  chosen: PlatformName | null;
  onChoose: (name: PlatformName | null) => void;
  onNext: () => void;
  onSkip: () => void;
}) {
  const config = useConfig(api);
  const [saved, setSaved] = useState(false);
  const info = CHOOSABLE.find((entry) => entry.name === chosen);
  return (
    <div className="setup-step" data-testid="setup-platform">
      <h3>2. Your first platform</h3>
      {!info ? (
        <>
          <p className="muted">Where do you want to talk to your assistant? You can add more later, in Platforms.</p>
          <div className="setup-platforms">
            {CHOOSABLE.map((entry) => (
              <button key={entry.name} type="button" onClick={() => onChoose(entry.name)}>
                {entry.label}
              </button>
            ))}
          </div>
        </>
      ) : config.view ? (
        <PlatformForm
          api={api}
          view={config.view}
          platform={info}
          onSaved={() => {
            setSaved(true);
            config.reload();
          }}
          onClose={() => {
            setSaved(false);
            onChoose(null);
          }}
        />
      ) : (
        <p className="muted">Reading the settings…</p>
      )}
      <div className="setup-actions">
        {info && saved && (
          <button type="button" className="primary" onClick={onNext}>
            Next: pair yourself
          </button>
        )}
        <button type="button" className="link" onClick={onSkip}>
          Skip: only the local chat for now
        </button>
      </div>
    </div>
  );
}

/** Step 3: write to the bot, approve the request, wait for the first answer to arrive. */
function PairStep({ api, platform, onDone }: { api: HomingApi; platform: PlatformName; onDone: () => void }) {
  const pairing = usePairing(api);
  const label = platformLabel(platform);
  const [answered, setAnswered] = useState(false);
  const approved = (pairing.value?.approved ?? []).some((entry) => entry.platform === platform);
  useGatewayEvents(api, (event) => {
    if (event.type === 'delivery.changed' && event.delivery.platform === platform && event.delivery.state === 'delivered') setAnswered(true);
  });
  return (
    <div className="setup-step" data-testid="setup-pair">
      <h3>3. Pair yourself</h3>
      {!approved ? (
        <p>
          Send any message to your bot on {label} now. A request with a code appears here: approve it, and your messages reach the
          agent.
        </p>
      ) : !answered ? (
        <p>You are paired. Send a message to your bot on {label}: the agent’s answer arrives there.</p>
      ) : (
        <p role="status" className="ok" data-testid="setup-answered">
          The first answer arrived on {label}. You are all set.
        </p>
      )}
      <PairingRequests api={api} platform={platform} pairing={pairing} />
      <div className="setup-actions">
        <button type="button" className={answered ? 'primary' : 'link'} onClick={onDone}>
          {answered ? 'Finish' : 'Skip: pair later (Platforms shows the requests)'}
        </button>
      </div>
    </div>
  );
}
