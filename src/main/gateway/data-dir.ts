import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Logger } from './logger';
import { tightenTree } from './private-file';

export const APP_NAME = 'Homing';

/**
 * The directory Electron's `app.getPath('userData')` gives an app named Homing,
 * computed without Electron, so the tray app and the headless gateway share one
 * data directory by default: ~/.config/Homing on Linux, ~/Library/Application
 * Support/Homing on macOS, %APPDATA%\Homing on Windows.
 */
export function defaultDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  switch (platform) {
    case 'darwin':
      return join(home, 'Library', 'Application Support', APP_NAME);
    case 'win32':
      return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), APP_NAME);
    default:
      return join(configHome(env, home), APP_NAME);
  }
}

/** Where Linux desktops keep per-user settings: $XDG_CONFIG_HOME when absolute (as the spec says), else ~/.config. */
export function configHome(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const xdg = env.XDG_CONFIG_HOME;
  return xdg && isAbsolute(xdg) ? xdg : join(home, '.config');
}

/** `--data-dir` wins over `HOMING_DATA_DIR`, which wins over the default. */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = flag ?? (env.HOMING_DATA_DIR || undefined);
  return chosen ? resolve(chosen) : defaultDataDir(env);
}

/**
 * Creates the data directory if it is missing, and makes it and everything in
 * it private to the user at every start, whatever the modes were (a restored
 * backup, an old version, a copy made with a loose umask): the directory and
 * its subdirectories 0700, every file 0600 — the ledger and its WAL/SHM, the
 * transcripts, secrets.json, install-secret, config.json, logs/. A path that
 * cannot be tightened (owned by someone else) is logged, not fatal.
 */
export function ensureDataDir(dataDir: string, logger?: Logger): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  for (const failure of tightenTree(dataDir)) {
    logger?.warn(`cannot make ${failure.path} private to this user: ${failure.error}`);
  }
}
