// Builds out/ (main, preload, renderer) when it is missing or older than the
// sources, so `npm install`, `npm run gateway` and `npx homing` find a fresh build.
// `--force` builds regardless (`npm run build`).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'out', '.build-stamp');
const inputs = ['src', 'resources', 'electron.vite.config.ts', 'package.json', 'tsconfig.base.json'];

function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

const builtAt = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changedAt = Math.max(...inputs.map((input) => newest(join(root, input))));
if (builtAt > changedAt && !process.argv.includes('--force')) process.exit(0);

const bin = join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');
if (!existsSync(bin)) {
  console.error('homing: electron-vite is not installed (npm install without dev dependencies?); skipping the build');
  process.exit(0);
}
console.error('Building Homing (main, preload, window)…');
const result = spawnSync(process.execPath, [bin, 'build', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(stamp, new Date().toISOString() + '\n');
