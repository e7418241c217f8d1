import { useEffect, useState } from 'react';
import type { ConfigView, HomingApi } from '../../../../shared/api';
import { FormMessage } from './FormMessage';
import { speechFields, speechSection, withSpeech, type SpeechFields, type SpeechKind } from './speech-section';
import { useSettingsForm } from './useSettingsForm';

const KINDS: [SpeechKind, string][] = [
  ['off', 'Off (the agent is told a voice note came)'],
  ['openai', 'An OpenAI-compatible transcription URL (whisper.cpp, speaches, LocalAI, …)'],
  ['command', 'A program run for each voice note (whisper-cli, …)'],
];

/** config.json's `speech` section and its fields' labels by key: a schema error about one of them is said in these words. */
const SECTION = { path: 'speech', labels: { url: 'Transcription URL', model: 'Model', language: 'Language', command: 'Program', args: 'Arguments' } };

/**
 * Voice notes: how they are turned into text for the agent (config.json's
 * top-level `speech`). Its own Save and Test, beside the agent's form: a
 * transcription server is set up apart from the model that answers.
 */
export function SpeechForm({ api, view, onSaved }: { api: HomingApi; view: ConfigView; onSaved: () => void }) {
  // Only a change of the section in force resets the form, not every reload of the config.
  const inForce = JSON.stringify((view.config as Record<string, unknown>).speech ?? null);
  const [fields, setFields] = useState<SpeechFields>(() => speechFields(JSON.parse(inForce)));
  useEffect(() => setFields(speechFields(JSON.parse(inForce))), [inForce]);
  // Saves patch config.json's own contents, never the defaults filled in.
  const written = (view.written ?? {}) as Record<string, unknown>;
  const form = useSettingsForm(api, () => written, view.error !== null, SECTION);
  const set = <K extends keyof SpeechFields>(key: K, value: SpeechFields[K]) => setFields((previous) => ({ ...previous, [key]: value }));
  const section = speechSection(fields, written.speech);
  const invalid = (key: string) => form.invalidField === key || undefined;

  return (
    <form
      className="settings"
      aria-labelledby="speech-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        void form.save((current) => withSpeech(current, section)).then((stored) => stored !== null && onSaved());
      }}
    >
      <h4 id="speech-form-title">Voice notes</h4>
      <label>
        Transcribe voice notes with
        <select value={fields.kind} onChange={(event) => set('kind', event.target.value as SpeechKind)}>
          {KINDS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {fields.kind === 'openai' && (
        <div className="grid">
          <label>
            Transcription URL
            <input
              value={fields.url}
              aria-invalid={invalid('url')}
              onChange={(event) => set('url', event.target.value)}
              placeholder="http://127.0.0.1:8080/v1/audio/transcriptions"
            />
          </label>
          <label>
            Model
            <input value={fields.model} aria-invalid={invalid('model')} onChange={(event) => set('model', event.target.value)} placeholder="whisper-1" />
          </label>
          <label>
            Language
            <input value={fields.language} aria-invalid={invalid('language')} onChange={(event) => set('language', event.target.value)} placeholder="detected (or en, de, …)" />
          </label>
        </div>
      )}
      {fields.kind === 'command' && (
        <div className="grid">
          <label>
            Program
            <input value={fields.command} aria-invalid={invalid('command')} onChange={(event) => set('command', event.target.value)} placeholder="whisper-cli" />
          </label>
          <label>
            Arguments
            <input value={fields.args} aria-invalid={invalid('args')} onChange={(event) => set('args', event.target.value)} placeholder="-m model.bin -f {file} -nt -np" />
            <span className="muted">{'{file}'} is replaced by the audio file’s path; what the program prints is the transcript.</span>
          </label>
        </div>
      )}
      <div className="actions">
        <button type="submit" disabled={form.busy}>
          Save voice notes
        </button>
        <button type="button" disabled={form.busy || section === undefined} onClick={() => {
            if (section) void form.test('speech', section);
          }}>
          Test
        </button>
      </div>
      <FormMessage form={form} testId="speech-form-message" path={view.path} onReplaced={onSaved} />
    </form>
  );
}
