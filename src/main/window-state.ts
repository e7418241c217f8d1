/**
 * The window's size and position, remembered in `<dataDir>/window-state.json`.
 * A saved position on a display that is gone (a laptop off its dock) is not
 * restored: the window would open off-screen.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { writePrivateFile } from './gateway/private-file';

export interface Bounds {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface WindowState {
  readonly bounds: Bounds;
  readonly maximized: boolean;
}

export const WINDOW_STATE_FILE = 'window-state.json';
export const DEFAULT_SIZE = { width: 1000, height: 720 } as const;
export const MIN_SIZE = { width: 360, height: 320 } as const;

const boundsSchema = z.object({ x: z.number().int(), y: z.number().int(), width: z.number().int().positive(), height: z.number().int().positive() });
const stateSchema = z.object({ bounds: boundsSchema, maximized: z.boolean() });

export function windowStateFile(dataDir: string): string {
  return join(dataDir, WINDOW_STATE_FILE);
}

export function loadWindowState(file: string): WindowState | undefined {
  try {
    return stateSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
}

export function saveWindowState(file: string, state: WindowState): void {
  mkdirSync(dirname(file), { recursive: true });
  writePrivateFile(file, JSON.stringify(state) + '\n');
}

/** Where to open the window: the saved bounds if they still fit a display's work area, else the default size, centred. */
export function initialBounds(saved: WindowState | undefined, workAreas: readonly Bounds[]): Partial<Bounds> & { width: number; height: number } {
  if (!saved) return { ...DEFAULT_SIZE };
  const { x, y } = saved.bounds;
  const width = Math.max(MIN_SIZE.width, saved.bounds.width);
  const height = Math.max(MIN_SIZE.height, saved.bounds.height);
  // The title bar (the window's top 40 px) must be on a display to grab it.
  const visible = workAreas.some((area) => x + width > area.x + 40 && x < area.x + area.width - 40 && y >= area.y && y + 40 <= area.y + area.height);
  return visible ? { x, y, width, height } : { width, height };
}

/** The part of a BrowserWindow whose geometry is remembered. */
export interface TrackedWindow {
  on(event: 'resize' | 'move' | 'close', listener: () => void): void;
  getNormalBounds(): Bounds;
  isMaximized(): boolean;
}

/** Saves the window's geometry after it settles (debounced) and when it closes. */
export function trackWindowState(window: TrackedWindow, file: string, delayMs = 500): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const save = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    try {
      saveWindowState(file, { bounds: window.getNormalBounds(), maximized: window.isMaximized() });
    } catch {
      // Remembering the size is a comfort; a read-only data dir must not break the window.
    }
  };
  const later = (): void => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(save, delayMs);
  };
  window.on('resize', later);
  window.on('move', later);
  window.on('close', save);
}
