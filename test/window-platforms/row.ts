import type { Page } from 'playwright-core';
import type { ApiSocket } from '../support/api-socket';

/**
 * One row of the window's platform suite (test/window.platforms.e2e.test.ts):
 * a platform's service (a fake or a real Debian server), and what a person does
 * with its card and form in Platforms — open the form (Edit on its card, or Add
 * a platform), type the secret, one Save, Test connection, and for a platform
 * with pairing, a stranger's request — checked as it goes.
 * The suite starts the real `homing gateway` with `config`, opens the window in
 * Debian's Chromium on the Platforms view, hands it to `exercise`, and checks
 * that the page threw nothing.
 */
export interface WindowPlatformRow {
  /** The platform and what it talks to, as the suite's name says them: `Discord (the fake Discord)`. */
  readonly title: string;
  /** What the case checks, as its name. */
  readonly promise: string;
  readonly timeoutMs: number;
  start(): Promise<WindowPlatform>;
}

export interface WindowPlatform {
  /** config.json besides the agent: what is set before the window sets the rest. */
  readonly config: Record<string, unknown>;
  exercise(window: { page: Page; api: ApiSocket; dataDir: string }): Promise<void>;
  /** Stops what `start` and `exercise` started. */
  dispose(): Promise<void>;
}
