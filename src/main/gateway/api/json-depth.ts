/**
 * How deeply a parsed message may nest. Real requests nest a handful of levels
 * (a config's sections and their lists); schema checks and handlers walk values
 * recursively, so 10 000 levels would overflow the stack inside them and come
 * back as `internal`. Checked on arrival instead, without recursion.
 */
export const MAX_MESSAGE_DEPTH = 64;

/** True when `value` has objects or arrays nested more than `limit` levels deep. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
