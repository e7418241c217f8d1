import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { createContext, type Bench } from './harness';

// `npm run bench [name-filter]`: runs every bench/*.bench.ts, one after another.
const dir = fileURLToPath(new URL('.', import.meta.url));
const filter = process.argv[2];
const files = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => !filter || file.includes(filter))
  .sort();

console.log(`Homing benchmarks — node ${process.version}, ${new Date().toISOString()}`);
for (const file of files) {
  const bench = (await import(pathToFileURL(join(dir, file)).href)).default as Bench;
  console.log(`\n${bench.name}`);
  const { context, cleanup } = createContext((line) => console.log(line));
  try {
    await bench.run(context);
  } finally {
    cleanup();
  }
}
