#!/usr/bin/env node
// `homing …`: runs the built CLI (out/main/cli.js). `npm install` builds it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../out/main/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  process.stderr.write('homing: not built yet; run `npm run build` in the Homing folder first\n');
  process.exit(1);
}
await import(cli.href);
