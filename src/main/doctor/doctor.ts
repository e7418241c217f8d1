import { accessSync, constants, existsSync, readFileSync, statfsSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { ConnectionTestResult } from '../../shared/api';
import type { SecretName } from '../../shared/platforms';
import { parseConfigText } from '../gateway/config/load';
import { isDataDirLocked, readLockHolder } from '../gateway/data-dir-lock';
import { homingConfigSchema, type HomingConfig } from '../gateway/homing-config';
import { testConnection } from '../gateway/platforms/connection-test';
import { sectionOf } from '../gateway/platforms/catalog';
import { platformModules } from '../gateway/platforms/registry';
import { SECRET_NAMES, SECRETS_FILE, secretsFileSchema, type SecretStore } from '../gateway/secrets/secret-store';
import { DEFAULT_HEADLESS_PORT, readSavedAccess } from '../headless/saved-access';
import { SAFE_SECRETS_FILE } from '../safe-secrets';
import { serviceStatus, type ServiceHost } from '../service/service-manager';
import { SYSTEMD_UNIT } from '../service/service-templates';

/**
 * `homing doctor`: what usually goes wrong, checked in one go, each finding in
 * words with what to do about it. Read-only: it never creates the data
 * directory, never takes the lock, never moves a broken file aside and never
 * prints a secret (connection tests send a saved secret only to the server it
 * was saved for, as the window's Test connection does).
 */

/** ok: fine. warn: worth knowing, nothing broken. fail: needs the user (the exit code says so). skip: could not be checked from here. */
export type CheckLevel = 'ok' | 'warn' | 'fail' | 'skip';

export interface Finding {
  /** What was checked: `node`, `data directory`, `gateway`, `config`, `secrets`, `agent`, `telegram`, `window port`, `disk`, `service`. */
  readonly check: string;
  readonly level: CheckLevel;
  readonly message: string;
  /** What to do about it. */
  readonly fix?: string;
}

export interface DoctorOptions {
  readonly dataDir: string;
  /** Default `<dataDir>/config.json`. */
  readonly configFile?: string;
  readonly env: NodeJS.ProcessEnv;
  /** How long one connection test may take (default 10 s). */
  readonly timeoutMs?: number;
  /** The service manager to ask; undefined: not asked. */
  readonly serviceHost?: ServiceHost;
  /** Node's version (default: this process's). */
  readonly nodeVersion?: string;
  readonly fetch?: typeof fetch;
}

/** package.json's engines.node. */
export const MIN_NODE: readonly [number, number] = [20, 19];
/** Free space below which the ledger may fail to write (SQLite then refuses, and replies wait). */
const DISK_FAIL_BYTES = 50 * 1024 * 1024;
const DISK_WARN_BYTES = 500 * 1024 * 1024;

export async function runDoctor(options: DoctorOptions): Promise<Finding[]> {
  const findings: Finding[] = [checkNode(options.nodeVersion ?? process.versions.node)];
  findings.push(checkDataDir(options.dataDir));
  const gateway = checkGateway(options.dataDir);
  findings.push(gateway.finding);
  const config = checkConfig(options.configFile ?? join(options.dataDir, 'config.json'));
  findings.push(config.finding);
  if (config.value) {
    const secrets = readSecrets(options.dataDir);
    if (secrets.finding) findings.push(secrets.finding);
    findings.push(...(await checkConnections(config.value, secrets, options)));
  }
  findings.push(await checkWindowPort(options.dataDir, gateway.running));
  findings.push(checkDisk(options.dataDir));
  if (options.serviceHost) findings.push(checkService(options.serviceHost, options.dataDir, gateway.running));
  return findings;
}

/** Whether anything needs the user (the exit code). */
export function needsUser(findings: readonly Finding[]): boolean {
  return findings.some((finding) => finding.level === 'fail');
}

export function checkNode(version: string): Finding {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const enough = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  return enough
    ? { check: 'node', level: 'ok', message: `Node ${version}` }
    : {
        check: 'node',
        level: 'fail',
        message: `Node ${version} is too old: Homing needs ${MIN_NODE.join('.')} or later`,
        fix: 'install a current Node 20 or 22 (nodejs.org, or your package manager), then run npm install again',
      };
}

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8).padStart(4, '0');
}

export function checkDataDir(dataDir: string): Finding {
  const check = 'data directory';
  if (!existsSync(dataDir)) {
    const parent = nearestExisting(dataDir);
    try {
      accessSync(parent, constants.W_OK);
    } catch {
      return { check, level: 'fail', message: `${dataDir} does not exist and cannot be created: ${parent} is not writable by you`, fix: 'choose another --data-dir, or fix the permissions' };
    }
    return { check, level: 'ok', message: `${dataDir} does not exist yet: the first start creates it` };
  }
  if (!statSync(dataDir).isDirectory()) return { check, level: 'fail', message: `${dataDir} is not a directory`, fix: 'move that file away, or choose another --data-dir' };
  try {
    accessSync(dataDir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch {
    return { check, level: 'fail', message: `${dataDir} is not readable and writable by you`, fix: `fix its owner or permissions (chmod 700 "${dataDir}")` };
  }
  if (process.platform !== 'win32' && (statSync(dataDir).mode & 0o077) !== 0) {
    return {
      check,
      level: 'warn',
      message: `${dataDir} can be read by other users (mode ${mode(dataDir)}); it holds your conversations and secrets`,
      fix: `chmod 700 "${dataDir}" (the gateway also makes it private at every start)`,
    };
  }
  return { check, level: 'ok', message: `${dataDir}, private to you` };
}

function nearestExisting(path: string): string {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}

function checkGateway(dataDir: string): { readonly finding: Finding; readonly running: boolean } {
  const check = 'gateway';
  let locked: boolean | undefined;
  try {
    locked = isDataDirLocked(dataDir);
  } catch (error) {
    return { running: false, finding: { check, level: 'fail', message: errorText(error), fix: `check the permissions of ${join(dataDir, 'gateway.lock')}` } };
  }
  if (!locked) return { running: false, finding: { check, level: 'ok', message: locked === undefined ? 'no gateway has run on this data directory yet' : 'no gateway is running on this data directory' } };
  const holder = readLockHolder(dataDir);
  const who = holder ? ` (pid ${holder.pid}, ${holder.mode}${holder.url ? `, ${holder.url}` : ''}, since ${new Date(holder.startedAt).toISOString().replace('T', ' ').slice(0, 19)} UTC)` : '';
  return { running: true, finding: { check, level: 'ok', message: `a gateway is running on this data directory${who}; a second one would be refused` } };
}

function checkConfig(file: string): { readonly finding: Finding; readonly value?: HomingConfig } {
  const check = 'config';
  if (!existsSync(file)) {
    return { finding: { check, level: 'ok', message: `no ${file}: the defaults (the local chat and the built-in agent)` }, value: homingConfigSchema.parse({}) };
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { finding: { check, level: 'fail', message: `${file} cannot be read: ${errorText(error)}`, fix: 'fix its permissions' } };
  }
  const parsed = parseConfigText(text, homingConfigSchema, file);
  if (!parsed.ok) {
    return { finding: { check, level: 'fail', message: parsed.error, fix: `fix ${file} (the gateway runs on the defaults until it is fixed, and never overwrites it)` } };
  }
  const enabled = platformModules().filter((module) => sectionOf(parsed.value, module)?.enabled).map((module) => module.label);
  return {
    finding: { check, level: 'ok', message: `${file} is valid; platforms: ${enabled.length > 0 ? enabled.join(', ') : 'the local chat only'}` },
    value: parsed.value,
  };
}

/**
 * The secrets as the headless gateway keeps them (secrets.json), read without
 * changing anything: a broken file is reported, not moved aside. The tray app
 * keeps them encrypted with the system's keychain (secrets.safe.json), which
 * only it can open: connection tests that need one of those say so.
 */
interface SecretsRead extends SecretStore {
  readonly finding?: Finding;
  readonly encryptedByTray: boolean;
}

function readSecrets(dataDir: string): SecretsRead {
  const file = join(dataDir, SECRETS_FILE);
  const encryptedByTray = existsSync(join(dataDir, SAFE_SECRETS_FILE));
  let values: Record<string, string> = {};
  let finding: Finding | undefined;
  if (existsSync(file)) {
    try {
      values = secretsFileSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    } catch (error) {
      finding = {
        check: 'secrets',
        level: 'fail',
        message: `${file} cannot be read as secrets (${error instanceof SyntaxError ? 'not JSON' : 'not names and values'})`,
        fix: 'the gateway moves it aside at its next start; enter the secrets again in the window',
      };
    }
  }
  const readOnly = (): never => {
    throw new Error('homing doctor changes no secret');
  };
  return {
    get: (name: SecretName) => values[name],
    set: readOnly,
    delete: readOnly,
    names: () => SECRET_NAMES.filter((name) => values[name] !== undefined),
    encryptedByTray,
    ...(finding ? { finding } : {}),
  };
}

async function checkConnections(config: HomingConfig, secrets: SecretsRead, options: DoctorOptions): Promise<Finding[]> {
  const deps = {
    secrets,
    env: options.env,
    savedConfig: config,
    savedAgent: config.agent,
    timeoutMs: options.timeoutMs ?? 10_000,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const agent = testConnection('agent', config.agent, deps).then(
    (result) => fromTest('agent', result, 'fix the agent in the window (Platforms → Agent) or config.json, or start the agent server'),
    (error: unknown) => couldNotCheck('agent', error),
  );
  const platforms = platformModules()
    .filter((module) => sectionOf(config, module)?.enabled)
    .map(async (module): Promise<Finding> => {
      const secretNames = module.info.secrets as readonly SecretName[];
      const kept = secretNames.some((name) => secrets.get(name) !== undefined);
      if (!kept && secrets.encryptedByTray && secretNames.length > 0) {
        return {
          check: module.name,
          level: 'skip',
          message: `${module.label}: its secrets are kept encrypted by the tray app; use Test connection in its window`,
        };
      }
      try {
        const result = await testConnection(module.name, sectionOf(config, module), deps);
        return fromTest(module.name, result, `fix ${module.label} in the window (Platforms → ${module.label}) or in config.json and the secret store`, module.label);
      } catch (error) {
        return couldNotCheck(module.name, error);
      }
    });
  return Promise.all([agent, ...platforms]);
}

/** A check that threw: said, not a crash of the whole report. */
function couldNotCheck(check: string, error: unknown): Finding {
  return { check, level: 'fail', message: `could not be checked: ${errorText(error)}`, fix: 'run homing doctor again; if it repeats, report it with this line' };
}

function fromTest(check: string, result: ConnectionTestResult, fix: string, label?: string): Finding {
  const message = label ? `${label}: ${result.message}` : result.message;
  return result.ok ? { check, level: 'ok', message } : { check, level: 'fail', message, fix };
}

/** The headless window's port: in use by another program, the window moves (and says so); worth knowing before. */
async function checkWindowPort(dataDir: string, gatewayRunning: boolean): Promise<Finding> {
  const check = 'window port';
  const saved = readSavedAccess(dataDir);
  const port = saved.ok ? saved.access.port : DEFAULT_HEADLESS_PORT;
  if (gatewayRunning) return { check, level: 'ok', message: `port ${port} on 127.0.0.1 (the running gateway's, if it serves a window)` };
  const free = await new Promise<boolean | string>((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE' ? false : errorText(error)));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
  if (free === true) return { check, level: 'ok', message: `port ${port} on 127.0.0.1 is free for the window` };
  if (free === false) {
    return {
      check,
      level: 'warn',
      message: `port ${port} on 127.0.0.1 is in use by another program`,
      fix: 'the gateway moves its window to a free port and keeps it (homing url prints it); or stop that program, or pass --port',
    };
  }
  return { check, level: 'warn', message: `port ${port} on 127.0.0.1 could not be tried: ${free}` };
}

function checkDisk(dataDir: string): Finding {
  const check = 'disk';
  const at = nearestExisting(dataDir);
  let free: number;
  try {
    const stats = statfsSync(at);
    free = stats.bavail * stats.bsize;
  } catch (error) {
    return { check, level: 'skip', message: `free space on ${at} cannot be read: ${errorText(error)}` };
  }
  const database = join(dataDir, 'homing.db');
  const size = existsSync(database) ? `; the ledger and sessions database is ${formatBytes(statSync(database).size)}` : '';
  const message = `${formatBytes(free)} free on ${at}${size}`;
  if (free < DISK_FAIL_BYTES) {
    return { check, level: 'fail', message, fix: 'free some space: with a full disk the ledger cannot record replies, and they wait until it can' };
  }
  if (free < DISK_WARN_BYTES) return { check, level: 'warn', message, fix: 'free some space before it runs out' };
  return { check, level: 'ok', message };
}

function checkService(host: ServiceHost, dataDir: string, gatewayRunning: boolean): Finding {
  const check = 'service';
  let status;
  try {
    status = serviceStatus(host);
  } catch (error) {
    return { check, level: 'skip', message: errorText(error) };
  }
  if (!status.installed) return { check, level: 'ok', message: 'not installed (homing service install runs the gateway at login and after a crash)' };
  const elsewhere = status.dataDir !== undefined && status.dataDir !== dataDir ? ` (on another data directory: ${status.dataDir})` : '';
  if (!status.manager) return { check, level: 'warn', message: `installed${elsewhere}; the service manager cannot be asked: ${status.managerUnreachable ?? 'unknown'}` };
  const { state } = status.manager;
  if (state.startsWith('failed')) {
    return {
      check,
      level: 'fail',
      message: `installed${elsewhere} and failed: it stopped restarting (${state})`,
      fix:
        host.platform === 'linux'
          ? `see journalctl --user -u ${SYSTEMD_UNIT}, then systemctl --user reset-failed ${SYSTEMD_UNIT} && systemctl --user start ${SYSTEMD_UNIT}`
          : 'see its log, then homing service install',
    };
  }
  if (state.startsWith('active') || state.startsWith('running') || state === 'Running') return { check, level: 'ok', message: `installed${elsewhere}: ${state}` };
  return {
    check,
    level: elsewhere === '' && !gatewayRunning ? 'warn' : 'ok',
    message: `installed${elsewhere}: ${state}`,
    ...(elsewhere === '' && !gatewayRunning ? { fix: 'homing service install starts it again' } : {}),
  };
}

function formatBytes(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
