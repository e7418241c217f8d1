/**
 * The oldest signal-cli Homing works with: 0.12.1. Before it, the JSON-RPC
 * `receive` method was broken in daemon mode (CHANGELOG 0.12.0: "Fixed
 * finishLink/receive/register/verify commands for JSON-RPC") and the receive
 * notification's shape changed back and forth (0.12.0, 0.12.1); `send`'s
 * text styles exist since 0.11.11.
 */
export const MIN_SIGNAL_CLI = [0, 12, 1] as const;
export const MIN_SIGNAL_CLI_TEXT = MIN_SIGNAL_CLI.join('.');

/** `version`'s answer (`{version: "0.13.4"}`, VersionCommand) as numbers; undefined when unreadable. */
export function parseVersion(result: unknown): readonly number[] | undefined {
  const version = typeof result === 'object' && result !== null ? (result as { version?: unknown }).version : undefined;
  if (typeof version !== 'string') return undefined;
  const match = /^(\d{1,4})\.(\d{1,4})\.(\d{1,4})/.exec(version);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

export function versionText(result: unknown): string {
  const version = typeof result === 'object' && result !== null ? (result as { version?: unknown }).version : undefined;
  return typeof version === 'string' ? version.slice(0, 40) : 'unknown';
}

export function isOutdated(version: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) {
    if (version[i]! !== MIN_SIGNAL_CLI[i]) return version[i]! < MIN_SIGNAL_CLI[i]!;
  }
  return false;
}

/** What to do when no signal-cli answers, in words: install, link, start the daemon. */
export function howToStartSignalCli(address: string): string {
  return (
    `install signal-cli ${MIN_SIGNAL_CLI_TEXT} or newer (github.com/AsamK/signal-cli/releases), link it to your phone with ` +
    `\`signal-cli link -n Homing\` (scan the QR code in Signal → Settings → Linked devices), then start ` +
    `\`signal-cli -a +YOUR_NUMBER daemon --tcp ${address} --receive-mode manual\``
  );
}
