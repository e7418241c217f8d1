/**
 * Checks a parsed JSON value before any schema or JSON.stringify sees it.
 *
 * - Keys that name an object's machinery (`__proto__`, `constructor`,
 *   `prototype`) are refused by name: zod copies records by assignment, so a
 *   `__proto__` key would silently vanish (or, worse, become the copy's
 *   prototype) instead of being reported.
 * - Nesting is limited: schemas, JSON.stringify and deep-equality checks all
 *   recurse, and 10 000 levels overflow the stack ("internal" instead of an
 *   answer). No real config.json is deeper than a handful of levels.
 *
 * The walk itself is iterative, so it cannot overflow on the input it guards against.
 */

export const MAX_CONFIG_DEPTH = 16;

const MACHINERY_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** One line naming the place (`sessions.identityLinks.__proto__: …`), or null when the shape is fine. */
export function jsonShapeError(value: unknown, maxDepth: number = MAX_CONFIG_DEPTH): string | null {
  const stack: { value: unknown; path: readonly (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: node, path } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (path.length >= maxDepth) {
      return `${formatPath(path)}: nested more than ${maxDepth} levels deep (a config is never this deep)`;
    }
    if (Array.isArray(node)) {
      node.forEach((item, index) => stack.push({ value: item, path: [...path, index] }));
      continue;
    }
    for (const key of Object.keys(node)) {
      if (MACHINERY_KEYS.has(key)) {
        return `${formatPath([...path, key])}: "${key}" is not allowed as a key (it names part of JavaScript's object machinery)`;
      }
      stack.push({ value: (node as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return null;
}

/** `a.b[0].c`, the way describeIssues names a field; the first levels only when the path is very long. */
export function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(top level)';
  const shown = path.length > 8 ? [...path.slice(0, 8), '…'] : path;
  return shown.map((part) => (typeof part === 'number' ? `[${part}]` : String(part))).join('.').replace(/\.\[/g, '[');
}
