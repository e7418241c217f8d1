import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { configHome } from '../gateway/data-dir';
import { isDataDirLocked, readLockHolder, type LockHolder } from '../gateway/data-dir-lock';
import {
  LAUNCHD_LABEL,
  launchdPlist,
  SYSTEMD_UNIT,
  systemdUnit,
  WINDOWS_TASK,
  windowsTask,
  type ServiceSpec,
} from './service-templates';

/** One call of a service manager's command (systemctl, launchctl, schtasks). */
export interface ManagerResult {
  readonly ok: boolean;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The program is not on this machine at all. */
  readonly missing: boolean;
}

export type RunManager = (command: string, args: readonly string[]) => ManagerResult;

/**
 * Runs the real commands in `env` (the user's: systemctl --user finds the user's
 * manager through XDG_RUNTIME_DIR), each with a timeout: a hung service manager
 * must not hang `homing service`.
 */
export function managerRunner(env: NodeJS.ProcessEnv): RunManager {
  return (command, args) => runOnce(command, args, env);
}

function runOnce(command: string, args: readonly string[], env: NodeJS.ProcessEnv): ManagerResult {
  const result = spawnSync(command, args, { env, encoding: 'utf8', timeout: 15_000, windowsHide: true, maxBuffer: 1 << 20 });
  const error = result.error as NodeJS.ErrnoException | undefined;
  return {
    ok: !error && result.status === 0,
    code: result.status,
    stdout: result.stdout ?? '',
    stderr: (result.stderr ?? '').trim() || (error ? error.message : ''),
    missing: error?.code === 'ENOENT',
  };
}

/** The machine a service is installed on: injected, so tests install into a temporary home with a scripted manager. */
export interface ServiceHost {
  readonly platform: NodeJS.Platform;
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly run: RunManager;
  /** launchd's gui/<uid> domain. */
  readonly uid: number;
  /** loginctl's user; the scheduled task's DOMAIN\user. */
  readonly user: string;
}

export class UnsupportedPlatformError extends Error {
  override readonly name = 'UnsupportedPlatformError';
}

/** Where the service's file lives: the systemd unit, the launchd plist, or the task XML kept for Task Scheduler. */
export function serviceFile(host: Pick<ServiceHost, 'platform' | 'home' | 'env'>): string {
  switch (host.platform) {
    case 'linux':
      return join(configHome(host.env, host.home), 'systemd', 'user', SYSTEMD_UNIT);
    case 'darwin':
      return join(host.home, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`);
    case 'win32':
      return join(host.env.LOCALAPPDATA ?? join(host.home, 'AppData', 'Local'), 'Homing', 'homing-gateway-task.xml');
    default:
      throw new UnsupportedPlatformError(`homing service knows systemd (Linux), launchd (macOS) and Task Scheduler (Windows), not ${host.platform}`);
  }
}

/** Where launchd writes the gateway's output on macOS. */
function macLogFile(home: string): string {
  return join(home, 'Library', 'Logs', 'Homing', 'gateway.log');
}

export type InstallOutcome =
  /** Written, enabled and (re)started. */
  | { readonly kind: 'started'; readonly file: string; readonly notes: readonly string[] }
  /** Written and enabled, not started: another gateway runs on the data directory (named, not fought). */
  | { readonly kind: 'enabled'; readonly file: string; readonly holder: LockHolder | undefined; readonly notes: readonly string[] }
  /** Written; the service manager cannot be reached from here (no systemd user instance: a container, WSL). */
  | { readonly kind: 'written'; readonly file: string; readonly reason: string; readonly commands: readonly string[]; readonly notes: readonly string[] }
  /** The service manager refused. */
  | { readonly kind: 'failed'; readonly file: string; readonly reason: string };

/**
 * Writes the service for `spec` and has the service manager start it at login
 * and now. A gateway already running on the data directory (the tray app, a
 * `homing gateway` in a terminal) is left running: the service is enabled for
 * the next login, and the outcome names the one running.
 */
export function installService(spec: ServiceSpec, host: ServiceHost): InstallOutcome {
  const file = serviceFile(host);
  const running = runningGateway(spec.dataDir);
  switch (host.platform) {
    case 'linux':
      return installSystemd(spec, host, file, running);
    case 'darwin':
      return installLaunchd(spec, host, file, running);
    default:
      return installTask(spec, host, file, running);
  }
}

function runningGateway(dataDir: string): { readonly locked: boolean; readonly holder: LockHolder | undefined } {
  const locked = isDataDirLocked(dataDir) === true;
  return { locked, holder: locked ? readLockHolder(dataDir) : undefined };
}

function writeServiceFile(file: string, text: string | Buffer): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text, { mode: 0o644 });
}

/** systemd's major version ("systemd 252 (252.38-1~deb12u1)"), if systemctl is here. */
function systemdVersion(host: ServiceHost): number | undefined {
  const result = host.run('systemctl', ['--version']);
  const match = /^systemd (\d+)/.exec(result.stdout);
  return result.ok && match ? Number(match[1]) : undefined;
}

function installSystemd(
  spec: ServiceSpec,
  host: ServiceHost,
  file: string,
  running: { readonly locked: boolean; readonly holder: LockHolder | undefined },
): InstallOutcome {
  writeServiceFile(file, systemdUnit(spec, { systemdVersion: systemdVersion(host) }));
  const notes = lingerNotes(host);
  const reload = host.run('systemctl', ['--user', 'daemon-reload']);
  if (!reload.ok) {
    return {
      kind: 'written',
      file,
      reason: reload.missing ? 'systemctl is not installed here' : `no systemd user manager answered (${firstLine(reload.stderr)})`,
      commands: ['systemctl --user daemon-reload', `systemctl --user enable --now ${SYSTEMD_UNIT}`],
      notes,
    };
  }
  const enable = host.run('systemctl', ['--user', 'enable', SYSTEMD_UNIT]);
  if (!enable.ok) return { kind: 'failed', file, reason: `systemctl --user enable ${SYSTEMD_UNIT}: ${firstLine(enable.stderr)}` };
  const mainPid = Number(systemdProperties(host).MainPID ?? 0);
  // The lock's holder is the service itself (a reinstall): restarting it is what applies the new unit.
  if (running.locked && running.holder?.pid !== mainPid) return { kind: 'enabled', file, holder: running.holder, notes };
  const start = host.run('systemctl', ['--user', 'restart', SYSTEMD_UNIT]);
  if (!start.ok) return { kind: 'failed', file, reason: `systemctl --user restart ${SYSTEMD_UNIT}: ${firstLine(start.stderr)}` };
  return { kind: 'started', file, notes };
}

/** Without lingering, a user's services stop at logout and start only at login: a home server wants them from boot. */
function lingerNotes(host: ServiceHost): string[] {
  const linger = host.run('loginctl', ['show-user', host.user, '--property=Linger', '--value']);
  if (linger.ok && linger.stdout.trim() === 'yes') return [];
  return [
    'The gateway starts when you log in and stops when you log out. To run it from boot, logged in or not (a home server), allow your user services to linger once:',
    `  loginctl enable-linger ${host.user}`,
  ];
}

function installLaunchd(
  spec: ServiceSpec,
  host: ServiceHost,
  file: string,
  running: { readonly locked: boolean; readonly holder: LockHolder | undefined },
): InstallOutcome {
  const logFile = macLogFile(host.home);
  mkdirSync(dirname(logFile), { recursive: true });
  const domain = `gui/${host.uid}`;
  // A loaded agent keeps its old definition: take it out first (an error here only means it was not loaded).
  host.run('launchctl', ['bootout', `${domain}/${LAUNCHD_LABEL}`]);
  writeServiceFile(file, launchdPlist({ ...spec, logFile }));
  const notes = [`Its output goes to ${logFile}.`];
  if (running.locked) {
    // Loaded now, it would start at once and find the data directory taken: it loads at the next login instead.
    return { kind: 'enabled', file, holder: running.holder, notes };
  }
  const load = host.run('launchctl', ['bootstrap', domain, file]);
  if (load.missing) return { kind: 'written', file, reason: 'launchctl is not available here', commands: [`launchctl bootstrap ${domain} ${file}`], notes };
  if (!load.ok) return { kind: 'failed', file, reason: `launchctl bootstrap ${domain}: ${firstLine(load.stderr)}` };
  return { kind: 'started', file, notes };
}

function installTask(
  spec: ServiceSpec,
  host: ServiceHost,
  file: string,
  running: { readonly locked: boolean; readonly holder: LockHolder | undefined },
): InstallOutcome {
  // Task Scheduler reads the XML as UTF-16, as its declaration says.
  writeServiceFile(file, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(windowsTask(spec, host.user), 'utf16le')]));
  const create = host.run('schtasks', ['/Create', '/TN', WINDOWS_TASK, '/XML', file, '/F']);
  if (create.missing) return { kind: 'written', file, reason: 'schtasks is not available here', commands: [`schtasks /Create /TN ${WINDOWS_TASK} /XML "${file}" /F`], notes: [] };
  if (!create.ok) return { kind: 'failed', file, reason: `schtasks /Create: ${firstLine(create.stderr)}` };
  if (running.locked) return { kind: 'enabled', file, holder: running.holder, notes: [] };
  const start = host.run('schtasks', ['/Run', '/TN', WINDOWS_TASK]);
  if (!start.ok) return { kind: 'failed', file, reason: `schtasks /Run: ${firstLine(start.stderr)}` };
  return { kind: 'started', file, notes: [] };
}

export type UninstallOutcome = { readonly kind: 'removed'; readonly file: string } | { readonly kind: 'absent'; readonly file: string };

/** Stops the service (the gateway stops cleanly: SIGTERM), unregisters it and deletes its file. */
export function uninstallService(host: ServiceHost): UninstallOutcome {
  const file = serviceFile(host);
  const present = existsSync(file);
  switch (host.platform) {
    case 'linux':
      host.run('systemctl', ['--user', 'disable', '--now', SYSTEMD_UNIT]);
      break;
    case 'darwin':
      host.run('launchctl', ['bootout', `gui/${host.uid}/${LAUNCHD_LABEL}`]);
      break;
    default:
      host.run('schtasks', ['/End', '/TN', WINDOWS_TASK]);
      host.run('schtasks', ['/Delete', '/TN', WINDOWS_TASK, '/F']);
  }
  rmSync(file, { force: true });
  if (host.platform === 'linux') host.run('systemctl', ['--user', 'daemon-reload']);
  return present ? { kind: 'removed', file } : { kind: 'absent', file };
}

export interface ServiceStatus {
  readonly file: string;
  readonly installed: boolean;
  /** The data directory the installed service runs on (read back from its file). */
  readonly dataDir: string | undefined;
  /** What the service manager says, in its words; undefined when it cannot be asked. */
  readonly manager: { readonly state: string; readonly pid: number | undefined; readonly restarts: number | undefined; readonly enabled: boolean | undefined } | undefined;
  /** Why the manager could not be asked. */
  readonly managerUnreachable: string | undefined;
  /** Whether a gateway holds the data directory now, and what it said about itself. */
  readonly gateway: { readonly running: boolean; readonly holder: LockHolder | undefined } | undefined;
}

/** What is installed, what the service manager says of it, and whether a gateway runs on its data directory. */
export function serviceStatus(host: ServiceHost): ServiceStatus {
  const file = serviceFile(host);
  const installed = existsSync(file);
  const dataDir = installed ? dataDirOf(host.platform, readServiceFile(file)) : undefined;
  let manager: ServiceStatus['manager'];
  let managerUnreachable: string | undefined;
  if (host.platform === 'linux') {
    const props = systemdProperties(host);
    if (props.error !== undefined) managerUnreachable = props.error;
    else {
      manager = {
        state: props.SubState && props.ActiveState ? `${props.ActiveState} (${props.SubState})` : (props.ActiveState ?? 'unknown'),
        pid: Number(props.MainPID) > 0 ? Number(props.MainPID) : undefined,
        restarts: props.NRestarts !== undefined ? Number(props.NRestarts) : undefined,
        enabled: props.UnitFileState === undefined ? undefined : props.UnitFileState === 'enabled',
      };
    }
  } else if (host.platform === 'darwin') {
    const printed = host.run('launchctl', ['print', `gui/${host.uid}/${LAUNCHD_LABEL}`]);
    if (printed.missing) managerUnreachable = 'launchctl is not available here';
    else if (!printed.ok) manager = { state: 'not loaded', pid: undefined, restarts: undefined, enabled: false };
    else {
      const state = /^\s*state = (.+)$/m.exec(printed.stdout)?.[1] ?? 'loaded';
      const pid = /^\s*pid = (\d+)$/m.exec(printed.stdout)?.[1];
      const runs = /^\s*runs = (\d+)$/m.exec(printed.stdout)?.[1];
      manager = { state, pid: pid ? Number(pid) : undefined, restarts: runs ? Math.max(0, Number(runs) - 1) : undefined, enabled: true };
    }
  } else {
    const query = host.run('schtasks', ['/Query', '/TN', WINDOWS_TASK, '/FO', 'LIST']);
    if (query.missing) managerUnreachable = 'schtasks is not available here';
    else if (!query.ok) manager = { state: 'not registered', pid: undefined, restarts: undefined, enabled: false };
    else manager = { state: /^Status:\s*(.+)$/m.exec(query.stdout)?.[1]?.trim() ?? 'registered', pid: undefined, restarts: undefined, enabled: true };
  }
  let gateway: ServiceStatus['gateway'];
  if (dataDir !== undefined) {
    try {
      const locked = isDataDirLocked(dataDir) === true;
      gateway = { running: locked, holder: locked ? readLockHolder(dataDir) : undefined };
    } catch {
      gateway = undefined;
    }
  }
  return { file, installed, dataDir, manager, managerUnreachable, gateway };
}

type SystemdProperties = Record<string, string | undefined> & { readonly error?: string };

function systemdProperties(host: ServiceHost): SystemdProperties {
  const shown = host.run('systemctl', ['--user', 'show', SYSTEMD_UNIT, '--property=LoadState,ActiveState,SubState,MainPID,NRestarts,UnitFileState,Result']);
  if (!shown.ok) return { error: shown.missing ? 'systemctl is not installed here' : `no systemd user manager answered (${firstLine(shown.stderr)})` };
  const props: Record<string, string> = {};
  for (const line of shown.stdout.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) props[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return props;
}

function readServiceFile(file: string): string {
  const bytes = readFileSync(file);
  return bytes[0] === 0xff && bytes[1] === 0xfe ? bytes.subarray(2).toString('utf16le') : bytes.toString('utf8');
}

/** The `--data-dir` the service's command line names, read back from its file. */
export function dataDirOf(platform: NodeJS.Platform, text: string): string | undefined {
  let args: string[] = [];
  if (platform === 'linux') {
    const line = /^ExecStart=(.*)$/m.exec(text)?.[1];
    if (line !== undefined) args = systemdWords(line);
  } else if (platform === 'darwin') {
    const array = /<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/.exec(text)?.[1] ?? '';
    args = [...array.matchAll(/<string>([\s\S]*?)<\/string>/g)].map((match) => xmlUnescape(match[1]!));
  } else {
    const line = /<Arguments>([\s\S]*?)<\/Arguments>/.exec(text)?.[1];
    if (line !== undefined) args = windowsWords(xmlUnescape(line));
  }
  const at = args.indexOf('--data-dir');
  return at >= 0 ? args[at + 1] : undefined;
}

/** A systemd command line split into its words (the inverse of systemdWord). */
export function systemdWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const match of line.matchAll(pattern)) {
    const raw = match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : match[2]!;
    words.push(raw.replace(/%%/g, '%').replace(/\$\$/g, '$'));
  }
  return words;
}

/** A Windows command line split as CommandLineToArgvW does (the inverse of windowsArg). */
export function windowsWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let quoted = false;
  let any = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\') {
      let slashes = 0;
      while (line[i] === '\\') {
        slashes++;
        i++;
      }
      if (line[i] === '"') {
        word += '\\'.repeat(Math.floor(slashes / 2));
        if (slashes % 2 === 1) word += '"';
        else quoted = !quoted;
      } else {
        word += '\\'.repeat(slashes);
        i--;
      }
      any = true;
    } else if (c === '"') {
      quoted = !quoted;
      any = true;
    } else if (/\s/.test(c) && !quoted) {
      if (any) words.push(word);
      word = '';
      any = false;
    } else {
      word += c;
      any = true;
    }
  }
  if (any) words.push(word);
  return words;
}

function xmlUnescape(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim() !== '')?.trim() ?? 'no output';
}
