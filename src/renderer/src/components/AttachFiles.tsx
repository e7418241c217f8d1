import { useRef } from 'react';
import { fileSize } from '../format';
import { FileIcon } from './FileIcon';
import type { Attachment, Attachments } from '../hooks/useAttachments';

/** The paperclip: the system's file picker, several files at once. */
export function AttachButton({ attachments, disabled }: { attachments: Attachments; disabled: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" className="attach" aria-label="Attach files" title="Attach files" disabled={disabled} onClick={() => input.current?.click()}>
        <FileIcon kind="attach" />
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        data-testid="attach-input"
        onChange={(event) => {
          if (event.target.files) attachments.add(event.target.files);
          // The same file can be chosen again after it was removed.
          event.target.value = '';
        }}
      />
    </>
  );
}

/** The files chosen for the next message, above the input: each removable until it is sent, with its upload's progress or error. */
export function AttachmentChips({ attachments, sending }: { attachments: Attachments; sending: boolean }) {
  if (attachments.list.length === 0 && !attachments.note) return null;
  return (
    <>
      {attachments.list.length > 0 && (
        <ul className="attachments" aria-label="Files to send">
          {attachments.list.map((attachment) => (
            <li key={attachment.key} className={`attachment attachment-${attachment.state}`} data-testid="attachment">
              <span className="media-name">{attachment.file.name || 'file'}</span>
              <span className="media-size">{progressOf(attachment)}</span>
              <button type="button" className="remove" disabled={sending} aria-label={`Remove ${attachment.file.name || 'file'}`} onClick={() => attachments.remove(attachment.key)}>
                ×
              </button>
              {attachment.error && (
                <span role="alert" className="media-error">
                  {attachment.error}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      {attachments.note && (
        <p role="status" className="muted">
          {attachments.note}
        </p>
      )}
    </>
  );
}

/** "1.2 MB", "uploading 42% of 1.2 MB", "1.2 MB, uploaded". */
function progressOf({ file, state, sent }: Attachment): string {
  const size = fileSize(file.size);
  switch (state) {
    case 'chosen':
    case 'failed':
      return size;
    case 'uploading':
      return `uploading ${file.size === 0 ? 100 : Math.floor((sent / file.size) * 100)}% of ${size}`;
    case 'uploaded':
      return `${size}, uploaded`;
  }
}
