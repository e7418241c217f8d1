import { useEffect, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { FormMessage } from './FormMessage';
import { secretWords, type StoredSecret, type TypedSecret } from './save-settings';
import { SecretField } from './SecretField';
import { useFocusOnOpen } from './form-focus';
import { useSettingsForm } from './useSettingsForm';

type AgentType = 'builtin' | 'openai' | 'command' | 'acp';

interface AgentFields {
  type: AgentType;
  baseUrl: string;
  model: string;
  command: string;
  args: string;
  /** openai only: the model takes images, so photos are sent to it as image content. */
  images: boolean;
}

function fieldsFrom(config: Record<string, unknown>): AgentFields {
  const agent = (config.agent ?? { type: 'builtin' }) as Record<string, unknown>;
  return {
    type: (agent.type as AgentType) ?? 'builtin',
    baseUrl: String(agent.baseUrl ?? 'http://127.0.0.1:11434/v1'),
    model: String(agent.model ?? ''),
    command: String(agent.command ?? ''),
    args: ((agent.args as string[] | undefined) ?? []).join(' '),
    images: agent.images === true,
  };
}

function toSection(fields: AgentFields, previous: Record<string, unknown>): Record<string, unknown> {
  const keep = previous.type === fields.type ? previous : {};
  switch (fields.type) {
    case 'builtin':
      return { type: 'builtin' };
    case 'openai': {
      // Off is the key left out (config.json's default), not `false` written.
      const { images: _images, ...rest } = keep;
      return { ...rest, type: 'openai', baseUrl: fields.baseUrl.trim(), model: fields.model.trim(), ...(fields.images ? { images: true } : {}) };
    }
    case 'command':
    case 'acp':
      return { ...keep, type: fields.type, command: fields.command.trim(), args: fields.args.split(/\s+/).filter(Boolean) };
  }
}

const TYPES: [AgentType, string][] = [
  ['builtin', 'Built-in (needs nothing)'],
  ['openai', 'OpenAI-compatible server (Ollama, LM Studio, llama.cpp, …)'],
  ['command', 'A program run for each turn'],
  ['acp', 'An Agent Client Protocol agent'],
];

/** The form's section of config.json and its fields' labels by key: a schema error about one of them is said in these words. */
const SECTION = { path: 'agent', labels: { baseUrl: 'Server URL', model: 'Model', command: 'Program', args: 'Arguments' } };

/** The API key's label; its name in a sentence is "API key". */
const API_KEY_LABEL = 'API key (if the server needs one)';

/** Choose and set up the agent; the gateway checks it with config.json's schema. One Save keeps the API key typed too, in the secret store. */
export function AgentForm({ api, view, onSaved, onClose }: { api: HomingApi; view: ConfigView; onSaved: () => void; onClose: () => void }) {
  // Only a change of the agent in force resets the form: clearing the API key reloads the config, and must not wipe what is being typed.
  const inForce = JSON.stringify((view.config as Record<string, unknown>).agent ?? null);
  const [fields, setFields] = useState<AgentFields>(() => fieldsFrom(view.config as Record<string, unknown>));
  useEffect(() => setFields(fieldsFrom({ agent: JSON.parse(inForce) ?? undefined })), [inForce]);
  const [apiKey, setApiKey] = useState('');
  // Saves patch config.json's own contents, never the defaults filled in.
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null, SECTION);
  const set = <K extends keyof AgentFields>(key: K, value: AgentFields[K]) => setFields((previous) => ({ ...previous, [key]: value }));
  // The agent section as config.json itself has it (what the form does not show is kept).
  const previous = (((view.written ?? {}) as Record<string, unknown>).agent ?? {}) as Record<string, unknown>;
  // The key is only asked of an OpenAI-compatible server; typed and then hidden by another kind, it is not saved.
  const typed: TypedSecret[] = fields.type === 'openai' && apiKey !== '' ? [{ name: 'agent.apiKey', label: secretWords(API_KEY_LABEL), value: apiKey }] : [];
  const formRef = useFocusOnOpen();
  const afterSave = (stored: readonly StoredSecret[] | null) => {
    if (stored === null) return;
    if (stored.length > 0) setApiKey('');
    onSaved();
  };

  return (
    <form
      ref={formRef}
      className="settings"
      aria-labelledby="agent-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void form.save((current) => ({ ...current, agent: toSection(fields, previous) }), typed).then(afterSave);
      }}
    >
      <h4 id="agent-form-title" className="visually-hidden">
        Agent settings
      </h4>
      <label>
        Kind of agent
        <select value={fields.type} onChange={(event) => set('type', event.target.value as AgentType)}>
          {TYPES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {fields.type === 'openai' && (
        <div className="grid">
          <label>
            Server URL
            <input value={fields.baseUrl} aria-invalid={form.invalidField === 'baseUrl' || undefined} onChange={(event) => set('baseUrl', event.target.value)} />
          </label>
          <label>
            Model
            <input value={fields.model} aria-invalid={form.invalidField === 'model' || undefined} onChange={(event) => set('model', event.target.value)} placeholder="llama3.2" />
          </label>
        </div>
      )}
      {fields.type === 'openai' && (
        <div className="field hinted">
          <label className="check">
            <input type="checkbox" checked={fields.images} aria-describedby="agent-images-hint" onChange={(event) => set('images', event.target.checked)} />
            Takes images (vision)
          </label>
          {/* The label leaves "model" out: the Model field above is found by that word. */}
          <span id="agent-images-hint" className="muted">
            Tick for a vision model, like llava, Gemma 3 or Qwen-VL: photos are then sent to it. A text-only model answers an image with an error.
          </span>
        </div>
      )}
      {fields.type === 'openai' && (
        <SecretField
          api={api}
          name="agent.apiKey"
          label={API_KEY_LABEL}
          isSet={view.secretsSet.includes('agent.apiKey')}
          value={apiKey}
          onChange={setApiKey}
          onCleared={onSaved}
        />
      )}
      {(fields.type === 'command' || fields.type === 'acp') && (
        <div className="grid">
          <label>
            Program
            <input value={fields.command} aria-invalid={form.invalidField === 'command' || undefined} onChange={(event) => set('command', event.target.value)} />
          </label>
          <label>
            Arguments
            <input value={fields.args} aria-invalid={form.invalidField === 'args' || undefined} onChange={(event) => set('args', event.target.value)} />
          </label>
        </div>
      )}
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          Save agent
        </button>
        <button type="button" disabled={form.busy} onClick={() => void form.test('agent', toSection(fields, previous))}>
          Test connection
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {typed.length > 0 && <p className="muted">Test connection uses the API key the secret store holds: save to test the one you typed.</p>}
      <FormMessage form={form} testId="agent-form-message" path={view.path} onReplaced={afterSave} />
    </form>
  );
}
