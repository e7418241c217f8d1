import { useRef, useState, type DragEvent } from 'react';

export interface FileDrop {
  /** Files are being dragged over the target (it shows where to drop them). */
  readonly over: boolean;
  readonly handlers: {
    onDragEnter(event: DragEvent): void;
    onDragOver(event: DragEvent): void;
    onDragLeave(event: DragEvent): void;
    onDrop(event: DragEvent): void;
  };
}

/** Whether a drag carries files (not text or a link dragged out of the page). */
function carriesFiles(event: DragEvent): boolean {
  return event.dataTransfer.types.includes('Files');
}

/**
 * Files dropped on an element. Enter and leave fire for every child the
 * pointer crosses, so "over" counts them rather than trusting the last one.
 * `enabled` false: drops are refused (the browser shows "not allowed").
 */
export function useFileDrop(onFiles: (files: File[]) => void, enabled: boolean): FileDrop {
  const depth = useRef(0);
  const [over, setOver] = useState(false);
  return {
    over,
    handlers: {
      onDragEnter(event) {
        if (!carriesFiles(event)) return;
        event.preventDefault();
        depth.current += 1;
        setOver(true);
      },
      onDragOver(event) {
        if (!carriesFiles(event)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = enabled ? 'copy' : 'none';
      },
      onDragLeave(event) {
        if (!carriesFiles(event)) return;
        depth.current = Math.max(0, depth.current - 1);
        if (depth.current === 0) setOver(false);
      },
      onDrop(event) {
        if (!carriesFiles(event)) return;
        // Never let the browser open the file in place of the window.
        event.preventDefault();
        depth.current = 0;
        setOver(false);
        if (enabled) onFiles([...event.dataTransfer.files]);
      },
    },
  };
}
