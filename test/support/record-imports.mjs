// `node --import <this file>`: every package the process imports (a bare
// specifier reaching Node's ESM loader: the built gateway's `import` and
// `import()` of its dependencies) is appended, one a line, to the file named by
// HOMING_TEST_IMPORT_LOG. For tests of what a start loads (startup-imports.e2e.test.ts).
import { register } from 'node:module';

register('./record-imports-hooks.mjs', import.meta.url, { data: { log: process.env.HOMING_TEST_IMPORT_LOG } });
