import { useState } from 'react';
import type { HomingApi } from '../../../../shared/api';
import { AttachButton, AttachmentChips } from '../../components/AttachFiles';
import { ErrorNote } from '../../components/ErrorNote';
import { useOnline } from '../../connection';
import type { Attachments } from '../../hooks/useAttachments';
import { explainApiError } from '../../plain-words';

/**
 * The local chat's composer: Enter sends, Shift+Enter adds a line; files chosen
 * with the paperclip (or dropped on the chat) go with the message, uploaded
 * when it is sent. Its height never depends on the transcript.
 */
export function Composer({ api, attachments }: { api: HomingApi; attachments: Attachments }) {
  const [draft, setDraft] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const online = useOnline();
  const empty = draft.trim() === '' && attachments.list.length === 0;

  const send = async () => {
    const text = draft.trim();
    if (empty || sending || !online) return;
    setSending(true);
    setError(null);
    // A refused upload is said on its file's chip; the draft and the files stay for another try.
    const uploads = await attachments.uploadAll();
    if (uploads === null) return setSending(false);
    const result = await api.sendLocalMessage(uploads.ids.length > 0 ? { text, files: uploads.ids } : { text });
    setSending(false);
    if (!result.ok) return setError(explainApiError('send your message', result.error));
    // Words typed while the files were uploading are kept for the next message.
    setDraft((current) => (current.trim() === text ? '' : current));
    attachments.sent(uploads.keys);
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
      <AttachmentChips attachments={attachments} sending={sending} />
      <div className="composer-row">
        <AttachButton attachments={attachments} disabled={sending} />
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
        <button type="submit" disabled={sending || !online || empty}>
          Send
        </button>
      </div>
    </form>
  );
}
