import { existsSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayStatus } from '../../shared/api';
import { formatUptime } from '../gateway/agents/builtin';
import { callControlSocket } from '../gateway/control-socket';
import { resolveDataDir } from '../gateway/data-dir';
import { installService, managerRunner, serviceStatus, uninstallService, type ServiceHost, type ServiceStatus } from '../service/service-manager';
import { gatewayArgs, SYSTEMD_UNIT, type ServiceSpec } from '../service/service-templates';
import { formatTime, parseCommandArgs, parsePort, UsageError, type CliContext, type Command } from './command';

const USAGE = `Usage: homing service install [--data-dir DIR] [--config FILE] [--port N]
       homing service uninstall
       homing service status [--json]

  Runs the headless gateway as a service of this user, started at login and
  again after a crash: a systemd user unit on Linux (logs: journalctl --user -u
  homing), a launchd agent on macOS, a scheduled task on Windows.

  install    writes the service for this Homing and this Node, and starts it.
             A gateway already running on the data directory (the tray app, a
             terminal) is left alone: the service starts at the next login.
  uninstall  stops the service (cleanly) and removes it.
  status     what is installed, what the service manager says, and whether a
             gateway runs on the service's data directory. Exit code 1 when no
             service is installed.

  --data-dir DIR  data directory (default: $HOMING_DATA_DIR, else the tray app's)
  --config FILE   configuration file (default: config.json in the data directory)
  --port N        port on 127.0.0.1 for the window (default: the data directory's)`;

export const serviceCommand: Command = {
  name: 'service',
  summary: 'install, remove or show the gateway as a service started at login',
  usage: USAGE,
  async run(args, context) {
    const [action, ...rest] = args;
    const host = serviceHostOf(context);
    switch (action) {
      case 'install':
        return install(rest, context, host);
      case 'uninstall': {
        parseCommandArgs('service uninstall', rest, {});
        const outcome = uninstallService(host);
        context.stdout(outcome.kind === 'removed' ? `Removed the service (${outcome.file}).` : `No service was installed (${outcome.file} does not exist).`);
        return 0;
      }
      case 'status': {
        const { values } = parseCommandArgs('service status', rest, { json: { type: 'boolean' } });
        const status = serviceStatus(host);
        const own = await gatewayOwnStatus(status.gateway?.holder?.socket);
        if (values.json) context.stdout(JSON.stringify({ ...status, gatewayStatus: own ?? null }, null, 2));
        else printStatus(status, own, host, context);
        return status.installed ? 0 : 1;
      }
      case undefined:
        throw new UsageError('service: say install, uninstall or status');
      default:
        throw new UsageError(`service: unknown action "${action}" (install, uninstall or status)`);
    }
  },
};

function install(args: string[], context: CliContext, host: ServiceHost): number {
  const { values } = parseCommandArgs('service install', args, {
    'data-dir': { type: 'string' },
    config: { type: 'string' },
    port: { type: 'string' },
  });
  const configFile = values.config === undefined ? undefined : resolve(values.config);
  if (configFile !== undefined && !(existsSync(configFile) && statSync(configFile).isFile())) {
    throw new UsageError(`service install: --config ${values.config}: no such file`);
  }
  const spec: ServiceSpec = {
    node: process.execPath,
    entry: homingEntry(),
    dataDir: resolveDataDir(values['data-dir'], context.env),
    configFile,
    port: values.port === undefined ? undefined : parsePort('service install', values.port, 0),
    path: context.env.PATH,
  };
  const outcome = installService(spec, host);
  context.stdout(`Wrote ${outcome.file}`);
  context.stdout(`  runs: ${[spec.node, ...gatewayArgs(spec)].join(' ')}`);
  switch (outcome.kind) {
    case 'started':
      context.stdout('Started: the gateway now runs as a service, at every login and again after a crash.');
      if (host.platform === 'linux') context.stdout(`  its log: journalctl --user -u ${SYSTEMD_UNIT} -f`);
      break;
    case 'enabled': {
      const holder = outcome.holder;
      context.stdout(
        `Enabled, not started: a gateway already runs on ${spec.dataDir}${holder ? ` (pid ${holder.pid}, ${holder.mode}, since ${formatTime(holder.startedAt)} UTC)` : ''}.`,
      );
      context.stdout('  Stop that one (quit the tray app, or Ctrl-C in its terminal); the service starts it at your next login, or now with:');
      context.stdout(host.platform === 'linux' ? `  systemctl --user start ${SYSTEMD_UNIT}` : '  homing service install');
      break;
    }
    case 'written':
      context.stderr(`homing: the service is written but not started: ${outcome.reason}. Once a service manager runs for your user, run:`);
      for (const command of outcome.commands) context.stderr(`  ${command}`);
      break;
    case 'failed':
      context.stderr(`homing: the service manager refused: ${outcome.reason}`);
      return 1;
  }
  for (const note of outcome.notes) context.stdout(note);
  return 0;
}

/** What the running gateway says of itself through its control socket (its state, version, uptime); undefined when it cannot be asked. */
async function gatewayOwnStatus(socket: string | null | undefined): Promise<GatewayStatus | undefined> {
  if (!socket) return undefined;
  try {
    const answer = await callControlSocket(socket, 'getStatus', undefined, 3_000);
    return answer.ok ? (answer.value as GatewayStatus) : undefined;
  } catch {
    return undefined;
  }
}

function printStatus(status: ServiceStatus, own: GatewayStatus | undefined, host: ServiceHost, context: CliContext): void {
  if (!status.installed) {
    context.stdout(`No service installed (${status.file} does not exist). Install one with: homing service install`);
    return;
  }
  context.stdout(`Service: installed (${status.file})`);
  if (status.dataDir !== undefined) context.stdout(`  data directory: ${status.dataDir}`);
  const managerName = host.platform === 'linux' ? 'systemd' : host.platform === 'darwin' ? 'launchd' : 'Task Scheduler';
  if (status.manager) {
    const { state, pid, restarts, enabled } = status.manager;
    const parts = [state, pid !== undefined ? `pid ${pid}` : '', restarts !== undefined ? `${restarts} restart${restarts === 1 ? '' : 's'}` : '', enabled === false ? 'not enabled' : ''];
    context.stdout(`  ${managerName}: ${parts.filter(Boolean).join(', ')}`);
    if (host.platform === 'linux' && state.startsWith('failed')) {
      context.stdout(`  it stopped restarting (ten starts in ten minutes); see journalctl --user -u ${SYSTEMD_UNIT}, then: systemctl --user reset-failed ${SYSTEMD_UNIT} && systemctl --user start ${SYSTEMD_UNIT}`);
    }
  } else {
    context.stdout(`  ${managerName}: cannot be asked (${status.managerUnreachable ?? 'unknown'})`);
  }
  if (status.gateway) {
    const holder = status.gateway.holder;
    context.stdout(
      status.gateway.running
        ? `  gateway: running${holder ? ` (pid ${holder.pid}, ${holder.mode}${holder.url ? `, ${holder.url}` : ''}, since ${formatTime(holder.startedAt)} UTC)` : ''}`
        : '  gateway: not running',
    );
    if (own) context.stdout(`  it says: ${own.state}, Homing ${own.version}, up ${formatUptime(own.uptimeMs)}`);
  }
}

/** This machine's service manager, in the user's environment. */
export function serviceHostOf(context: CliContext): ServiceHost {
  const env = context.env;
  const home = (process.platform === 'win32' ? env.USERPROFILE : env.HOME) || homedir();
  const user = process.platform === 'win32' && env.USERNAME ? (env.USERDOMAIN ? `${env.USERDOMAIN}\\${env.USERNAME}` : env.USERNAME) : (env.USER ?? userInfo().username);
  return { platform: process.platform, home, env, run: managerRunner(env), uid: process.getuid?.() ?? 0, user };
}

/** bin/homing.js of this Homing, found from wherever this code runs (out/main when built, src/main under the tests). */
export function homingEntry(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    const candidate = join(dir, 'bin', 'homing.js');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('cannot find bin/homing.js of this Homing: run homing service from the Homing folder or its npm install');
}
