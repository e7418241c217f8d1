// `npm run dist`: builds out/ and packages the tray app with electron-builder
// (electron-builder.yml): AppImage and deb on Linux, dmg on macOS, nsis on
// Windows. It needs internet (Electron's binary and headers for rebuilding
// better-sqlite3), so CI does not run it. Extra arguments go to electron-builder,
// e.g. `npm run dist -- --linux deb`.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = join(root, 'node_modules', 'electron-builder', 'package.json');
const bin = existsSync(pkg) ? JSON.parse(readFileSync(pkg, 'utf8')).bin : undefined;
const cli = join(root, 'node_modules', 'electron-builder', (typeof bin === 'string' ? bin : bin?.['electron-builder']) ?? 'cli.js');
if (!existsSync(cli)) {
  console.error('homing: electron-builder is not installed. Install it once with:\n\n  npm install -D electron-builder\n');
  process.exit(1);
}
const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js'), '--force'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const result = spawnSync(process.execPath, [cli, '--config', 'electron-builder.yml', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
