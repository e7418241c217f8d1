import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import type { HomingApi } from '../../../shared/api';
import { readMedia } from '../media-file';
import { explainApiError } from '../plain-words';

/** Where a file shown in place stands: not looked at yet, being read, shown (its object URL), only to save, or failed (in words). */
export type MediaView =
  | { readonly state: 'waiting' }
  | { readonly state: 'loading' }
  | { readonly state: 'shown'; readonly url: string }
  | { readonly state: 'save-only' }
  | { readonly state: 'failed'; readonly error: string };

/** How far beyond the visible messages a file starts loading, so it is there when scrolled to. */
const LOOK_AHEAD = '300px';
/** The scrolling box the items sit in (the transcript's log): the look-ahead applies to it, not the window. */
const SCROLLER = '[role="log"]';

/**
 * A photo or a voice note, read when its place in the transcript comes into
 * view (a long conversation does not read all its files at once) and shown
 * through an object URL that lives as long as the component: it is revoked on
 * unmount. Only a file the gateway marks `inline` gets a URL; anything else is
 * only offered to save.
 */
export function useVisibleMedia(api: HomingApi, sessionId: string, mediaId: string): { ref: RefObject<HTMLDivElement | null>; view: MediaView } {
  const ref = useRef<HTMLDivElement>(null);
  const [seen, setSeen] = useState(false);
  const [view, setView] = useState<MediaView>({ state: 'waiting' });

  useEffect(() => {
    const element = ref.current;
    if (seen || !element) return;
    if (typeof IntersectionObserver === 'undefined') return setSeen(true);
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting)) setSeen(true);
      },
      { root: element.closest(SCROLLER), rootMargin: LOOK_AHEAD },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [seen]);

  useEffect(() => {
    if (!seen) return;
    let url: string | null = null;
    let gone = false;
    setView({ state: 'loading' });
    void readMedia(api, sessionId, mediaId).then((file) => {
      if (gone) return;
      if (!file.ok) return setView({ state: 'failed', error: explainApiError('show this file', file.error) });
      if (!file.inline) return setView({ state: 'save-only' });
      url = URL.createObjectURL(file.blob);
      setView({ state: 'shown', url });
    });
    return () => {
      gone = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [api, sessionId, mediaId, seen]);

  return { ref, view };
}

/**
 * "Save" for any file: read on the click (not before: a document is not read
 * just because it scrolled by) and handed to the browser as a download of
 * opaque bytes (application/octet-stream), never opened. Its object URL is
 * revoked when the component goes.
 */
export function useSaveMedia(api: HomingApi, sessionId: string, mediaId: string, name: string): { save: () => void; saving: boolean; error: string | null } {
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const url = useRef<string | null>(null);
  const mounted = useRef(true);

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
      if (url.current) URL.revokeObjectURL(url.current);
      url.current = null;
    };
  }, []);

  const save = useCallback(() => {
    setSaving(true);
    setError(null);
    void readMedia(api, sessionId, mediaId).then((file) => {
      if (!mounted.current) return;
      setSaving(false);
      if (!file.ok) return setError(explainApiError('save this file', file.error));
      url.current ??= URL.createObjectURL(new Blob([file.blob], { type: 'application/octet-stream' }));
      const link = document.createElement('a');
      link.href = url.current;
      link.download = name;
      link.click();
    });
  }, [api, sessionId, mediaId, name]);

  return { save, saving, error };
}
