import { useState } from 'react';
import type { HomingApi, TranscriptMedia } from '../../../shared/api';
import { clipLength, fileSize } from '../format';
import { FileIcon } from './FileIcon';
import { useSaveMedia, useVisibleMedia, type MediaView } from '../hooks/useMediaFile';
import { useModalDialog } from '../hooks/useModalDialog';

type MediaKind = TranscriptMedia['kind'];

const KIND_WORD: Record<MediaKind, string> = { image: 'photo', voice: 'voice note', audio: 'audio', video: 'video', document: 'file' };

interface ItemProps {
  readonly api: HomingApi;
  readonly sessionId: string;
  readonly item: TranscriptMedia;
}

/**
 * The photos, voice notes and files a message carried. Only images and audio
 * the gateway marks `inline` are shown in place (through object URLs); every
 * other file is offered to save, never opened. Nothing is read before its
 * place comes into view, and a failure is said on the item, in words.
 */
export function MediaItems({ api, sessionId, media }: { api: HomingApi; sessionId: string; media: readonly TranscriptMedia[] }) {
  return (
    <ul className="media-items" aria-label="Files in this message">
      {media.map((item) => (
        <li key={item.id}>
          <MediaItem api={api} sessionId={sessionId} item={item} />
        </li>
      ))}
    </ul>
  );
}

function MediaItem({ api, sessionId, item }: ItemProps) {
  const transcript = item.kind === 'voice' || item.kind === 'audio' ? <SpokenText text={item.transcript} /> : null;
  if (item.state !== 'ready') {
    return (
      <>
        <UnavailableItem item={item} />
        {transcript}
      </>
    );
  }
  switch (item.kind) {
    case 'image':
      return <ImageItem api={api} sessionId={sessionId} item={item} />;
    case 'voice':
    case 'audio':
      return (
        <>
          <AudioItem api={api} sessionId={sessionId} item={item} />
          {transcript}
        </>
      );
    case 'video':
    case 'document':
      return <FileChip api={api} sessionId={sessionId} item={item} />;
  }
}

/** Its name as sent, or what it is. */
function labelOf(item: TranscriptMedia): string {
  return item.name ?? KIND_WORD[item.kind];
}

/** Removed after the retention time, failed, or not fetched yet: said, not read. */
function UnavailableItem({ item }: { item: TranscriptMedia }) {
  const [state, title] = UNAVAILABLE[item.state === 'ready' ? 'pending' : item.state];
  return (
    <div className="media-item media-chip media-unavailable" data-testid="media-unavailable" title={title}>
      <FileIcon kind={item.kind} />
      <span className="media-name">{labelOf(item)}</span>
      <span className="media-state">{state}</span>
      {item.state === 'failed' && item.error ? <span className="media-error">{item.error}</span> : null}
    </div>
  );
}

/** What a file not shown says, and its tooltip. */
const UNAVAILABLE: Record<Exclude<TranscriptMedia['state'], 'ready'>, readonly [string, string]> = {
  expired: ['expired', 'Removed after the time files are kept (media.keepDays in config.json).'],
  failed: ['could not be fetched', 'Homing could not fetch this file from its platform; the agent was told why.'],
  pending: ['not fetched yet', 'Homing fetches it before the agent answers the message.'],
};

/** What a file shown in place says while it is not shown (yet): loading, or why not. */
function Pending({ view, what }: { view: MediaView; what: string }) {
  if (view.state === 'failed') return <span className="media-error">{view.error}</span>;
  return <span className="media-loading">Loading the {what}…</span>;
}

/** A thumbnail; a click shows it larger. */
function ImageItem({ api, sessionId, item }: ItemProps) {
  const { ref, view } = useVisibleMedia(api, sessionId, item.id);
  const [open, setOpen] = useState(false);
  const label = labelOf(item);
  return (
    <div ref={ref} className="media-item media-image" data-testid="media-image">
      {view.state === 'shown' ? (
        <button type="button" className="media-thumb" onClick={() => setOpen(true)} aria-label={`View ${label} larger`}>
          <img src={view.url} alt={label} />
        </button>
      ) : view.state === 'save-only' ? (
        <FileChip api={api} sessionId={sessionId} item={item} />
      ) : (
        <Pending view={view} what="photo" />
      )}
      {open && view.state === 'shown' && <ImageViewer url={view.url} label={label} onClose={() => setOpen(false)} />}
    </div>
  );
}

/** The photo as large as the window allows, in a modal dialog: Escape, Close or a click beside it closes it. */
function ImageViewer({ url, label, onClose }: { url: string; label: string; onClose: () => void }) {
  const ref = useModalDialog();
  return (
    <dialog
      ref={ref}
      className="media-viewer"
      aria-label={label}
      data-testid="media-viewer"
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        if (event.target === event.currentTarget) onClose();
      }}
    >
      <img src={url} alt={label} />
      <div className="actions">
        <span className="media-name">{label}</span>
        <button type="button" autoFocus onClick={onClose}>
          Close
        </button>
      </div>
    </dialog>
  );
}

/** A compact player (audio the gateway marks playable; anything else is offered to save). */
function AudioItem({ api, sessionId, item }: ItemProps) {
  const { ref, view } = useVisibleMedia(api, sessionId, item.id);
  const label = labelOf(item);
  return (
    <div ref={ref} className="media-item media-audio" data-testid="media-audio">
      <span className="media-caption">
        <FileIcon kind={item.kind} /> {label}
        {item.durationS !== null && ` · ${clipLength(item.durationS)}`}
      </span>
      {view.state === 'shown' ? (
        <audio controls preload="metadata" src={view.url} aria-label={`Play ${label}`} />
      ) : view.state === 'save-only' ? (
        <FileChip api={api} sessionId={sessionId} item={item} />
      ) : (
        <Pending view={view} what={KIND_WORD[item.kind]} />
      )}
    </div>
  );
}

/** A voice note's words, once the speech-to-text engine made them. */
function SpokenText({ text }: { text: string | null }) {
  if (text === null) return null;
  return (
    <div className="media-transcript" data-testid="media-transcript">
      <span className="media-transcript-label">Transcript</span>
      <p>{text.trim() === '' ? 'No speech heard.' : text}</p>
    </div>
  );
}

/** Any other file: what it is, its size, and Save (read on the click, saved as opaque bytes). */
function FileChip({ api, sessionId, item }: ItemProps) {
  const name = item.name ?? 'file';
  const { save, saving, error } = useSaveMedia(api, sessionId, item.id, name);
  return (
    <div className="media-item media-chip" data-testid="media-file">
      <FileIcon kind={item.kind} />
      <span className="media-name">{name}</span>
      {item.size !== null && <span className="media-size">{fileSize(item.size)}</span>}
      <button type="button" onClick={save} disabled={saving} aria-label={`Save ${name}`}>
        {saving ? 'Saving…' : 'Save'}
      </button>
      {error && (
        <span role="alert" className="media-error">
          {error}
        </span>
      )}
    </div>
  );
}
