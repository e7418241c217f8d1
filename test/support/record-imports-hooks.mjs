// Module hooks for record-imports.mjs: they run on the loader's own thread.
import { appendFileSync } from 'node:fs';

let log;

export function initialize(data) {
  log = data?.log;
}

export async function resolve(specifier, context, next) {
  const bare = !/^(\.|\/|node:|file:|data:)/.test(specifier);
  if (log && bare) appendFileSync(log, `${specifier}\n`);
  return next(specifier, context);
}
