/**
 * Polls `condition` every 10 ms, for state that announces itself through no event
 * a test can hook (another process's files, what a remote client has received).
 */
export async function waitUntil(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
