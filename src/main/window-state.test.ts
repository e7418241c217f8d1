import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initialBounds, loadWindowState, trackWindowState, windowStateFile, type Bounds, type TrackedWindow } from './window-state';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const screen: Bounds = { x: 0, y: 0, width: 1920, height: 1080 };

function fakeWindow(bounds: Bounds, maximized = false) {
  const listeners = new Map<string, () => void>();
  const window: TrackedWindow & { emit(event: string): void; bounds: Bounds } = {
    bounds,
    on: (event, listener) => listeners.set(event, listener),
    getNormalBounds: () => window.bounds,
    isMaximized: () => maximized,
    emit: (event) => listeners.get(event)?.(),
  };
  return window;
}

describe("the window's size and position", () => {
  it('are saved on close and restored on the next start', () => {
    const file = windowStateFile(dataDir);
    const window = fakeWindow({ x: 100, y: 80, width: 800, height: 600 });
    trackWindowState(window, file);
    window.emit('close');
    const saved = loadWindowState(file);
    expect(saved).toEqual({ bounds: { x: 100, y: 80, width: 800, height: 600 }, maximized: false });
    expect(initialBounds(saved, [screen])).toEqual({ x: 100, y: 80, width: 800, height: 600 });
  });

  it('are saved after a resize settles', async () => {
    const file = windowStateFile(dataDir);
    const window = fakeWindow({ x: 0, y: 0, width: 900, height: 700 });
    trackWindowState(window, file, 5);
    window.emit('resize');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(loadWindowState(file)?.bounds.width).toBe(900);
  });

  it('open at the default size, centred, when nothing is saved, the file is bad, or the display is gone', () => {
    expect(initialBounds(undefined, [screen])).toEqual({ width: 1000, height: 720 });
    writeFileSync(windowStateFile(dataDir), '{"bounds": "nope"}');
    expect(loadWindowState(windowStateFile(dataDir))).toBeUndefined();
    const offScreen = { bounds: { x: 3000, y: 100, width: 800, height: 600 }, maximized: false };
    expect(initialBounds(offScreen, [screen])).toEqual({ width: 800, height: 600 });
    expect(initialBounds(offScreen, [screen, { x: 1920, y: 0, width: 2560, height: 1440 }])).toEqual(offScreen.bounds);
  });
});
