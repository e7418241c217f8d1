// `npm start`: the tray app. Builds out/, makes sure Electron's binary is present
// (Electron downloads it on first use), builds better-sqlite3 for Electron's ABI
// into out/native/electron/ (node_modules keeps the plain-Node build the tests and
// the headless gateway use), then starts Electron.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const electronDir = join(root, 'node_modules', 'electron');

function fail(message) {
  console.error(`homing: ${message}`);
  console.error('The same gateway runs without Electron: npm run gateway');
  process.exit(1);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  return result.status === 0;
}

if (!run(process.execPath, [join(root, 'scripts', 'build-if-needed.js')])) process.exit(1);

function electronBinary() {
  const pathFile = join(electronDir, 'path.txt');
  if (!existsSync(pathFile)) return undefined;
  const binary = join(electronDir, 'dist', readFileSync(pathFile, 'utf8'));
  return existsSync(binary) ? binary : undefined;
}

if (!existsSync(electronDir)) fail('Electron is not installed (run npm install).');
let binary = electronBinary();
if (!binary) {
  console.error('Fetching the Electron binary (first start only)…');
  const fetched = spawnSync(process.execPath, [join(electronDir, 'install.js')], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 10 * 60_000,
  });
  binary = electronBinary();
  if (fetched.status !== 0 || !binary) {
    const reason = String(fetched.stderr ?? '').split('\n').find((line) => /error/i.test(line)) ?? 'no network?';
    fail(`Electron's binary could not be downloaded (${reason.trim()}).`);
  }
}

// better-sqlite3 for Electron's ABI, rebuilt when Electron's version changes.
const electronVersion = JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8')).version;
const nativeDir = join(root, 'out', 'native', 'electron');
const versionFile = join(nativeDir, 'electron-version');
const binding = join(nativeDir, 'better_sqlite3.node');
if (!existsSync(binding) || !existsSync(versionFile) || readFileSync(versionFile, 'utf8') !== electronVersion) {
  const nodeGyp = process.env.npm_config_node_gyp;
  if (!nodeGyp) fail('run this through `npm start`, which provides node-gyp.');
  console.error(`Building better-sqlite3 for Electron ${electronVersion}…`);
  const work = mkdtempSync(join(tmpdir(), 'homing-native-'));
  try {
    cpSync(join(root, 'node_modules', 'better-sqlite3'), work, { recursive: true });
    rmSync(join(work, 'build'), { recursive: true, force: true });
    const ok = run(
      process.execPath,
      [nodeGyp, 'rebuild', '--release', `--target=${electronVersion}`, '--runtime=electron', '--dist-url=https://electronjs.org/headers'],
      { cwd: work },
    );
    if (!ok) fail('better-sqlite3 could not be built for Electron (compiler or headers missing).');
    mkdirSync(nativeDir, { recursive: true });
    cpSync(join(work, 'build', 'Release', 'better_sqlite3.node'), binding);
    writeFileSync(versionFile, electronVersion);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const env = { ...process.env };
delete env.ELECTRON_RUN_AS_NODE;
const app = spawn(binary, [root, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit', env });
app.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 0)));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => app.kill(signal));
