import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Gateway } from '../gateway/gateway';
import { resolveDataDir } from '../gateway/data-dir';
import { acquireDataDirLock, DataDirLocked, type DataDirLock } from '../gateway/data-dir-lock';
import { createLineLogger } from '../gateway/logger';
import { keepRunningOnUnhandledRejections, keepRunningWhenOutputCloses } from '../gateway/process-guard';
import { DEFAULT_HEADLESS_PORT } from '../headless/saved-access';
import type { HeadlessServer } from '../headless/server';
import { HOMING_VERSION } from '../version';
import { parseCommandArgs, parsePort, type Command } from './command';

/** Built layout: out/main/cli.js serves out/renderer. */
function defaultRendererDir(): string {
  return fileURLToPath(new URL('../renderer/', import.meta.url));
}

export const gatewayCommand: Command = {
  name: 'gateway',
  summary: 'run the gateway headless and serve its window on 127.0.0.1',
  usage: [
    'Usage: homing gateway [--config FILE] [--data-dir DIR] [--port N] [--no-ui]',
    '',
    '  --config FILE   configuration file (default: config.json in the data directory)',
    "  --data-dir DIR  data directory (default: $HOMING_DATA_DIR, else the tray app's)",
    '  --port N        port on 127.0.0.1 for the window; 0: any free port. Default: the',
    `                  port used last time with this data directory, else ${DEFAULT_HEADLESS_PORT}, else`,
    '                  any free one (then kept). Port and token live in headless.json',
    '                  (0600) in the data directory: the URL survives restarts (`npx homing url`)',
    '  --no-ui         serve no window: the gateway and its platforms only',
  ].join('\n'),
  async run(args, context) {
    const { values } = parseCommandArgs('gateway', args, {
      config: { type: 'string' },
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      'no-ui': { type: 'boolean' },
    });
    const port = values.port === undefined ? undefined : parsePort('gateway', values.port, 0);
    // A --config that names nothing is a typo, not a wish for the defaults: say so before anything starts.
    if (values.config !== undefined && !isFile(resolve(values.config))) {
      context.stderr(`homing: gateway: --config ${values.config}: no such file (leave --config out to use config.json in the data directory)`);
      return 2;
    }
    const dataDir = resolveDataDir(values['data-dir'], context.env);
    const output = keepRunningWhenOutputCloses();
    const logger = createLineLogger({
      level: context.env.HOMING_LOG_LEVEL === 'debug' ? 'debug' : 'info',
      write: (line) => void (output.isOpen('stderr') && process.stderr.write(line + '\n')),
    });
    keepRunningOnUnhandledRejections(logger);

    // One gateway per data directory: the lock is taken before anything heavy
    // loads, so a second gateway refuses at once, naming the first.
    let lock: DataDirLock;
    try {
      lock = acquireDataDirLock(dataDir, { mode: 'headless' });
    } catch (error) {
      if (error instanceof DataDirLocked) {
        context.stderr(`homing: ${error.message}`);
        return 2;
      }
      throw error;
    }
    let gateway: Gateway;
    try {
      const { Gateway } = await import('../gateway/gateway');
      gateway = Gateway.start({
        dataDir,
        mode: 'headless',
        version: HOMING_VERSION,
        logger,
        env: context.env,
        lock,
        ...(values.config ? { configFile: resolve(values.config) } : {}),
      });
    } catch (error) {
      lock.release();
      throw error;
    }
    if (gateway.config.lastError) context.stderr(`homing: ${gateway.config.lastError} (running on the defaults until it is fixed)`);
    let server: HeadlessServer | undefined;
    if (!values['no-ui']) {
      try {
        const { startStableServer } = await import('../headless/stable-server');
        const started = await startStableServer({
          dataDir,
          port,
          rendererDir: context.env.HOMING_RENDERER_DIR ?? defaultRendererDir(),
          api: gateway.api,
          logger,
        });
        if (!started.ok) throw new Error(started.message);
        server = started.server;
        if (started.movedFrom !== undefined) {
          context.stderr(
            `homing: port ${started.movedFrom} on 127.0.0.1 is in use, so the window moved to port ${server.port} (kept for the next starts; \`npx homing url\` prints the URL)`,
          );
        }
      } catch (error) {
        await gateway.stop();
        throw error;
      }
    }
    if (server) gateway.lock.update({ url: withoutToken(server.url) });
    context.stdout(`Homing ${HOMING_VERSION} gateway — data in ${dataDir}`);
    context.stdout(server ? `Open the window: ${server.url}` : 'No window (--no-ui). Stop with Ctrl-C.');

    await new Promise<void>((resolveStop) => {
      // The gateway's own timers are unref'd (they must never hold a stopping
      // process up), so without the window's server nothing keeps Node running:
      // `--no-ui` would exit right after "gateway running". This ref'd timer
      // holds the process until a signal stops it.
      const keepAlive = setInterval(() => {}, 2 ** 30);
      const stop = (signal: string) => {
        logger.info('stopping', { signal });
        clearInterval(keepAlive);
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
        void (async () => {
          await server?.close();
          await gateway.stop();
          resolveStop();
        })();
      };
      const onInt = () => stop('SIGINT');
      const onTerm = () => stop('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
    });
    return 0;
  },
};

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

/** The window's address without its access token (for gateway.json, which others may read). */
function withoutToken(url: string): string {
  const parsed = new URL(url);
  parsed.search = '';
  return parsed.toString();
}
