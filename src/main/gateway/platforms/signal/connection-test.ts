import type { ConnectionTestResult } from '../../../../shared/api';
import type { SignalConfig } from './config-schema';
import { describeAddress, parseDaemonAddress } from './daemon-address';
import { RpcConnection, RpcError } from './json-rpc-connection';
import { redactNumbers } from './send-errors';
import { silentLogger } from '../../logger';
import { howToStartSignalCli, isOutdated, MIN_SIGNAL_CLI_TEXT, parseVersion, versionText } from './version';

/**
 * "Test connection" for Signal: the daemon answers `version` (and is new
 * enough), and Signal says the account is registered (`getUserStatus`).
 */
export async function testSignalConnection(config: Pick<SignalConfig, 'daemon' | 'account'>, timeoutMs: number): Promise<ConnectionTestResult> {
  const parsed = parseDaemonAddress(config.daemon);
  if (!parsed.ok) return { ok: false, message: `platforms.signal.daemon: ${parsed.error}` };
  const where = describeAddress(parsed.address);
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  let connection: RpcConnection;
  try {
    connection = await RpcConnection.open(parsed.address, { logger: silentLogger, connectTimeoutMs: left() });
  } catch (error) {
    return { ok: false, message: `no signal-cli daemon at ${where}: ${error instanceof Error ? error.message : String(error)}. To set it up: ${howToStartSignalCli(where)}` };
  }
  try {
    let version: unknown;
    try {
      version = await connection.call('version', undefined, left());
    } catch (error) {
      if (error instanceof RpcError && error.code === -32601) return { ok: false, message: `the program at ${where} does not know \`version\`: Homing needs signal-cli ${MIN_SIGNAL_CLI_TEXT} or newer` };
      return { ok: false, message: `${where} did not answer as signal-cli does: ${error instanceof Error ? error.message : String(error)}` };
    }
    const numbers = parseVersion(version);
    if (!numbers) return { ok: false, message: `${where} answered, but not with a signal-cli version` };
    if (isOutdated(numbers)) return { ok: false, message: `signal-cli ${versionText(version)} is too old: Homing needs ${MIN_SIGNAL_CLI_TEXT} or newer (github.com/AsamK/signal-cli/releases)` };
    let statuses: unknown;
    try {
      statuses = await connection.call('getUserStatus', { recipient: [config.account] }, left());
    } catch (error) {
      const words = error instanceof Error ? redactNumbers(error.message) : String(error);
      return { ok: false, message: `signal-cli ${versionText(version)} answers, but could not check the account: ${words}. Is the daemon started with -a and the number you set here?` };
    }
    const own = Array.isArray(statuses) ? (statuses[0] as { isRegistered?: unknown } | undefined) : undefined;
    if (own?.isRegistered !== true) {
      return { ok: false, message: `signal-cli ${versionText(version)} answers, but Signal says the account is not registered: link it with \`signal-cli link -n Homing\` and restart the daemon` };
    }
    return { ok: true, message: `connected to signal-cli ${versionText(version)} at ${where}; the account is registered on Signal. Start the daemon with --receive-mode manual so no message is taken while Homing is away.` };
  } finally {
    connection.close();
  }
}
