import { fileURLToPath } from 'node:url';
import { Gateway } from '../gateway/gateway';
import { resolveDataDir } from '../gateway/data-dir';
import { createLineLogger } from '../gateway/logger';
import { startHeadlessServer } from '../headless/server';
import { HOMING_VERSION } from '../version';
import { parseCommandArgs, parsePort, type Command } from './command';

/** Built layout: out/main/cli.js serves out/renderer. */
function defaultRendererDir(): string {
  return fileURLToPath(new URL('../renderer/', import.meta.url));
}

export const gatewayCommand: Command = {
  name: 'gateway',
  summary: 'run the gateway headless and serve its window on 127.0.0.1',
  usage: 'Usage: homing gateway [--data-dir DIR] [--port N]\n\n  --port N        port on 127.0.0.1 (default 0: any free port)\n  --data-dir DIR  data directory (default: $HOMING_DATA_DIR, else the tray app\'s)',
  async run(args, context) {
    const { values } = parseCommandArgs('gateway', args, {
      'data-dir': { type: 'string' },
      port: { type: 'string' },
    });
    const port = parsePort('gateway', values.port, 0);
    const dataDir = resolveDataDir(values['data-dir'], context.env);
    const logger = createLineLogger({ level: context.env.HOMING_LOG_LEVEL === 'debug' ? 'debug' : 'info' });

    const gateway = Gateway.start({ dataDir, mode: 'headless', version: HOMING_VERSION, logger });
    let server;
    try {
      server = await startHeadlessServer({
        port,
        rendererDir: context.env.HOMING_RENDERER_DIR ?? defaultRendererDir(),
        api: gateway.api,
        logger,
      });
    } catch (error) {
      gateway.stop();
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new Error(`port ${port} on 127.0.0.1 is in use; choose another with --port`);
      throw error;
    }
    context.stdout(`Homing ${HOMING_VERSION} gateway — data in ${dataDir}`);
    context.stdout(`Open the window: ${server.url}`);

    await new Promise<void>((resolveStop) => {
      const stop = (signal: string) => {
        logger.info('stopping', { signal });
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
        void server.close().then(() => {
          gateway.stop();
          resolveStop();
        });
      };
      const onInt = () => stop('SIGINT');
      const onTerm = () => stop('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
    });
    return 0;
  },
};
