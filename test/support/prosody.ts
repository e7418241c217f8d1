import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports';
import { requireInstalled, serverProcess, type RunningServer } from './server-process';

/** Debian's prosody (TEST-SERVERS.md); the absolute paths work outside root's PATH too. */
export const PROSODY_PATH = process.env.HOMING_PROSODY ?? '/usr/bin/prosody';
export const PROSODYCTL_PATH = process.env.HOMING_PROSODYCTL ?? '/usr/bin/prosodyctl';
const TEMPLATE = fileURLToPath(new URL('../fixtures/prosody.cfg.lua', import.meta.url));

export const XMPP_DOMAIN = 'localhost';
/** Rooms with an archive (XEP-0313, prosody's mod_muc_mam). */
export const MUC_DOMAIN = 'conference.localhost';
/** Rooms without one (the same MUC, no mod_muc_mam). */
export const NO_ARCHIVE_MUC_DOMAIN = 'noarchive.localhost';

export interface ProsodyOptions {
  /** Accounts to create before the first start: local part → password. */
  readonly users?: Readonly<Record<string, string>>;
  /** How long a session whose connection died may be resumed (XEP-0198), in seconds (default 60). */
  readonly hibernationSeconds?: number;
}

/** Across `stop()` and `start()` its accounts stay and its MUC rooms go. */
export interface RunningProsody extends RunningServer {
  readonly domain: string;
  readonly mucDomain: string;
  /** The server's pid while it runs (our own child: `prosody -F`). */
  pid(): number | undefined;
  /** Creates (or re-passwords) an account with prosodyctl. */
  register(user: string, password: string): Promise<void>;
  /** SIGKILL by pid: the server dies without closing anything. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: sockets stay open, nothing answers. */
  pause(): void;
  resume(): void;
}

/**
 * A real prosody on 127.0.0.1 for one test file: the config from
 * test/fixtures/prosody.cfg.lua in a temp dir, a free port, accounts made with
 * prosodyctl, `prosody -F --config CFG` as our own child (server-process.ts).
 * Started means the port answers and the log says the c2s listener is up (a
 * prosody that refuses to run as root opens its port briefly before it hangs).
 */
export async function startProsody(options: ProsodyOptions = {}): Promise<RunningProsody> {
  requireInstalled(PROSODY_PATH, 'prosody', 'prosody');
  const dir = await mkdtemp(join(tmpdir(), 'homing-prosody-'));
  await mkdir(join(dir, 'data'), { recursive: true });
  const configPath = join(dir, 'prosody.cfg.lua');
  const template = readFileSync(TEMPLATE, 'utf8');
  let port = 0;
  const writeConfig = async (next: number) => {
    port = next;
    await writeFile(
      configPath,
      template
        .replaceAll('@DIR@', dir)
        .replaceAll('@PORT@', String(port))
        .replaceAll('@HIBERNATION@', String(options.hibernationSeconds ?? 60)),
    );
  };

  const server = serverProcess({
    name: 'prosody',
    path: PROSODY_PATH,
    args: ['-F', '--config', configPath],
    port: () => port,
    startMs: 15_000,
    stopMs: 3_000,
    // "Activated service 'c2s'" is logged once the listener is up; the port check confirms it.
    serving: /Activated service 'c2s' on \[127\.0\.0\.1\]:\d+/,
    refusal: /Refusing to run as root|Failed to open server port|address already in use|\berror\b.*config/i,
  });

  const register = (user: string, password: string) =>
    new Promise<void>((resolve, reject) => {
      execFile(PROSODYCTL_PATH, ['--config', configPath, 'register', user, XMPP_DOMAIN, password], { timeout: 20_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`prosodyctl register ${user} failed: ${error.message}\n${stdout}${stderr}`));
        else resolve();
      });
    });

  for (const [user, password] of Object.entries(options.users ?? {})) {
    if (port === 0) await writeConfig(await freePort());
    await register(user, password);
  }
  // The port was free a moment ago; another test may take it before prosody binds it: try another.
  for (let attempt = 1; ; attempt++) {
    if (port === 0 || attempt > 1) await writeConfig(await freePort());
    try {
      await server.start();
      break;
    } catch (error) {
      await server.stop('SIGKILL');
      if (attempt >= 5 || !/address already in use|Failed to open server port/i.test(server.output())) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  return {
    host: '127.0.0.1',
    get port() {
      return port;
    },
    domain: XMPP_DOMAIN,
    mucDomain: MUC_DOMAIN,
    pid: server.pid,
    output: server.output,
    register,
    stop: () => server.stop('SIGTERM'),
    kill: () => server.stop('SIGKILL'),
    start: server.start,
    pause: server.pause,
    resume: server.resume,
    dispose: async () => {
      await server.stop('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
