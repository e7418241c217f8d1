import { useEffect, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { FormMessage } from './FormMessage';
import { SecretField } from './SecretField';
import { useSettingsForm } from './useSettingsForm';

type AgentType = 'builtin' | 'openai' | 'command' | 'acp';

interface AgentFields {
  type: AgentType;
  baseUrl: string;
  model: string;
  command: string;
  args: string;
}

function fieldsFrom(config: Record<string, unknown>): AgentFields {
  const agent = (config.agent ?? { type: 'builtin' }) as Record<string, unknown>;
  return {
    type: (agent.type as AgentType) ?? 'builtin',
    baseUrl: String(agent.baseUrl ?? 'http://127.0.0.1:11434/v1'),
    model: String(agent.model ?? ''),
    command: String(agent.command ?? ''),
    args: ((agent.args as string[] | undefined) ?? []).join(' '),
  };
}

function toSection(fields: AgentFields, previous: Record<string, unknown>): Record<string, unknown> {
  const keep = previous.type === fields.type ? previous : {};
  switch (fields.type) {
    case 'builtin':
      return { type: 'builtin' };
    case 'openai':
      return { ...keep, type: 'openai', baseUrl: fields.baseUrl.trim(), model: fields.model.trim() };
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

/** Choose and set up the agent; the gateway checks it with config.json's schema. */
export function AgentForm({ api, view, onSaved }: { api: HomingApi; view: ConfigView; onSaved: () => void }) {
  const config = view.config as Record<string, unknown>;
  const [fields, setFields] = useState<AgentFields>(() => fieldsFrom(config));
  useEffect(() => setFields(fieldsFrom(view.config as Record<string, unknown>)), [view.config]);
  // Saves patch config.json's own contents, never the defaults filled in.
  const form = useSettingsForm(api, () => (view.written ?? {}) as Record<string, unknown>, view.error !== null, SECTION);
  const set = <K extends keyof AgentFields>(key: K, value: AgentFields[K]) => setFields((previous) => ({ ...previous, [key]: value }));
  // The agent section as config.json itself has it (what the form does not show is kept).
  const previous = (((view.written ?? {}) as Record<string, unknown>).agent ?? {}) as Record<string, unknown>;

  return (
    <form
      className="card settings"
      aria-labelledby="agent-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void form.save((current) => ({ ...current, agent: toSection(fields, previous) })).then((ok) => ok && onSaved());
      }}
    >
      <h3 id="agent-form-title">Agent</h3>
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
        <SecretField api={api} name="agent.apiKey" label="API key (if the server needs one)" isSet={view.secretsSet.includes('agent.apiKey')} onChanged={onSaved} />
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
      </div>
      <FormMessage form={form} testId="agent-form-message" path={view.path} onReplaced={onSaved} />
    </form>
  );
}
