/**
 * Start at login. Linux has no login-item API: an XDG autostart entry
 * (`~/.config/autostart/homing.desktop`) does it. macOS and Windows use
 * Electron's login item settings. The file system and Electron calls are
 * injected so both paths are tested under plain Node.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The part of Electron's `app` the login item uses (macOS, Windows). */
export interface LoginItemSurface {
  getLoginItemSettings(): { openAtLogin: boolean };
  setLoginItemSettings(settings: { openAtLogin: boolean; openAsHidden?: boolean; args?: string[] }): void;
}

export interface AutostartOptions {
  readonly platform: NodeJS.Platform;
  /** `$XDG_CONFIG_HOME`, else `~/.config`. */
  readonly configHome: string;
  /** What starts the app: the AppImage (`$APPIMAGE`) or the executable. */
  readonly command: readonly string[];
  readonly loginItems: LoginItemSurface;
}

export const AUTOSTART_FILE = 'homing.desktop';
/** Passed at login so the app starts in the tray without opening its window. */
export const HIDDEN_ARG = '--hidden';

/** Quotes one Exec argument as the Desktop Entry spec asks. */
function execArg(arg: string): string {
  if (!/[\s"'\\`$<>|;&*?#()]/.test(arg) && arg !== '') return arg.replace(/%/g, '%%');
  return `"${arg.replace(/[\\"`$]/g, (char) => `\\${char}`).replace(/%/g, '%%')}"`;
}

/** The XDG autostart entry's content. */
export function desktopEntry(command: readonly string[]): string {
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Name=Homing',
    'Comment=Your local agent on the chat platforms you use; no reply lost',
    `Exec=${[...command, HIDDEN_ARG].map(execArg).join(' ')}`,
    'Icon=homing',
    'Terminal=false',
    'X-GNOME-Autostart-enabled=true',
    '',
  ].join('\n');
}

export class Autostart {
  constructor(private readonly options: AutostartOptions) {}

  private get file(): string {
    return join(this.options.configHome, 'autostart', AUTOSTART_FILE);
  }

  isEnabled(): boolean {
    if (this.options.platform !== 'linux') return this.options.loginItems.getLoginItemSettings().openAtLogin;
    if (!existsSync(this.file)) return false;
    // A user can switch an entry off in their desktop's settings without deleting it.
    const entry = readFileSync(this.file, 'utf8');
    return !/^X-GNOME-Autostart-enabled=false$/m.test(entry) && !/^Hidden=true$/m.test(entry);
  }

  setEnabled(enabled: boolean): void {
    if (this.options.platform !== 'linux') {
      this.options.loginItems.setLoginItemSettings({ openAtLogin: enabled, openAsHidden: true, args: [HIDDEN_ARG] });
      return;
    }
    if (!enabled) {
      rmSync(this.file, { force: true });
      return;
    }
    mkdirSync(join(this.options.configHome, 'autostart'), { recursive: true });
    writeFileSync(this.file, desktopEntry(this.options.command));
  }
}

/** What to put in Exec: the AppImage when running from one (its mount point changes every run). */
export function launchCommand(execPath: string, env: NodeJS.ProcessEnv, defaultApp: boolean, appPath: string): string[] {
  if (env.APPIMAGE) return [env.APPIMAGE];
  // `electron .` in development: the app directory is an argument.
  return defaultApp ? [execPath, appPath] : [execPath];
}
