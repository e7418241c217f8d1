import { useState } from 'react';
import type { HomingApi } from '../../../../shared/api';
import { ErrorNote } from '../../components/ErrorNote';
import { useOnline } from '../../connection';
import { explainApiError } from '../../plain-words';

/** The local chat's composer: Enter sends, Shift+Enter adds a line. Its height never depends on the transcript. */
export function Composer({ api }: { api: HomingApi }) {
  const [draft, setDraft] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const online = useOnline();

  const send = async () => {
    const text = draft.trim();
    if (!text || sending || !online) return;
    setSending(true);
    setError(null);
    const result = await api.sendLocalMessage({ text });
    setSending(false);
    if (!result.ok) return setError(explainApiError('send your message', result.error));
    setDraft('');
  };

  return (
    <form
      className="composer"
      data-testid="composer"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <ErrorNote message={error} />
      <div className="composer-row">
        <label htmlFor="composer-input" className="visually-hidden">
          Message to your agent
        </label>
        <textarea
          id="composer-input"
          value={draft}
          rows={2}
          placeholder="Message your agent (Enter to send, Shift+Enter for a new line)"
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey) {
              event.preventDefault();
              void send();
            }
          }}
        />
        <button type="submit" disabled={sending || !online || draft.trim() === ''}>
          Send
        </button>
      </div>
    </form>
  );
}
