import { resolveDataDir } from '../gateway/data-dir';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PairingOverview } from '../../shared/api';
import { PairingStore, type PairingDecision } from '../gateway/access/pairing-store';
import { systemClock } from '../gateway/clock';
import { silentLogger } from '../gateway/logger';
import { INSTALL_SECRET_FILE, loadOrCreateInstallSecret } from '../gateway/session/install-secret';
import { createPseudonymiser } from '../gateway/session/pseudonyms';
import { dataDirToUse, formatTime, parseCommandArgs, UsageError, type CliContext, type Command } from './command';
import { throughGatewayOrHere } from './ledger-access';

const USAGE = `Usage: homing pairing list [--json] [--data-dir DIR]
       homing pairing approve <code> [--data-dir DIR]
       homing pairing deny <code> [--data-dir DIR]

  list            people waiting for approval (with the code they were sent), and who is approved or denied
  approve         let the sender of this code talk to the agent
  deny            refuse them: their messages never reach the agent, and they are not answered again
  --json          machine-readable output
  --data-dir DIR  data directory (default: $HOMING_DATA_DIR, else the tray app's)

  A new sender on Telegram or Matrix gets a pairing code from the bot; nothing of theirs
  reaches the agent until the code is approved here or in the window
  (Platforms → Telegram → requests, or Matrix → requests).`;

/**
 * Pairing from the command line: through the running gateway (it answers the
 * next message at once), or on the data directory's pairing.json when none runs.
 */
export const pairingCommand: Command = {
  name: 'pairing',
  summary: 'list, approve or deny people asking to talk to the agent',
  usage: USAGE,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs('pairing', args, { json: { type: 'boolean' }, 'data-dir': { type: 'string' } }, { min: 1, max: 2 });
    const [action, code] = positionals;
    const dataDir = resolveDataDir(values['data-dir'], context.env);
    switch (action) {
      case 'list': {
        if (code !== undefined) throw new UsageError(`pairing list: unexpected argument "${code}"`);
        dataDirToUse('pairing', values['data-dir'], context.env);
        const outcome = await throughGatewayOrHere(dataDir, { method: 'listPairing', params: undefined, read: (value) => value as PairingOverview }, () =>
          existsSync(dataDir) ? offlineStore(dataDir).view() : { requests: [], approved: [], denied: [], floods: [] },
        );
        if (values.json) context.stdout(JSON.stringify(outcome.value, null, 2));
        else printOverview(outcome.value, context);
        return 0;
      }
      case 'approve':
      case 'deny': {
        if (values.json !== undefined) throw new UsageError(`pairing ${action}: --json applies to list only`);
        if (code === undefined || !/^[A-Za-z0-9]{4,32}$/.test(code)) throw new UsageError(`pairing ${action}: which request? give its code (see homing pairing list)`);
        dataDirToUse('pairing', values['data-dir'], context.env);
        const decision: PairingDecision = action;
        const outcome = await throughGatewayOrHere(
          dataDir,
          { method: 'decidePairing', params: { code, decision }, read: (value) => value as { name: string | null; platform: string } },
          () => {
            if (!existsSync(dataDir)) return { ok: false as const, error: `no data directory at ${dataDir}` };
            return offlineStore(dataDir).decide(code, decision);
          },
        );
        const value = outcome.value;
        if ('ok' in value && !value.ok) throw new Error(value.error);
        const who = value.name ? `${value.name} (${value.platform})` : `the sender (${value.platform})`;
        context.stdout(action === 'approve' ? `Approved ${who}: their next message reaches the agent.` : `Denied ${who}: their messages never reach the agent.`);
        return 0;
      }
      default:
        throw new UsageError(`pairing: unknown action "${action}"; use list, approve or deny`);
    }
  },
};

/** The pairing file with no gateway running; pseudonyms need the install's key, which only an install-secret file gives here. */
function offlineStore(dataDir: string): PairingStore {
  const keyed = existsSync(join(dataDir, INSTALL_SECRET_FILE));
  const pseudonyms = keyed ? createPseudonymiser(loadOrCreateInstallSecret(dataDir)) : undefined;
  return new PairingStore(dataDir, {
    clock: systemClock,
    logger: silentLogger,
    pseudonym: (platform, senderId) => pseudonyms?.person(platform, senderId) ?? 'user_(not shown)',
  });
}

function printOverview(overview: PairingOverview, context: CliContext): void {
  // `?? []`: a gateway from before floods were counted answers without them.
  for (const flood of overview.floods ?? []) {
    const notKept = flood.notKept > 0 ? ` (${flood.notKept} not kept: the list is full)` : '';
    context.stdout(`A flood? ${flood.lastHour} new senders asked on ${flood.platform} in the last hour${notKept}, since ${formatTime(flood.since)}.`);
  }
  if (overview.requests.length === 0) context.stdout('No pairing requests waiting.');
  else {
    context.stdout('Waiting for approval:');
    for (const request of overview.requests) {
      context.stdout(`  ${request.code}  ${request.platform}  ${request.name ?? '(no name)'}  ${request.sender}  asked ${formatTime(request.requestedAt)}${request.told === false ? '  (code not sent yet)' : ''}`);
    }
  }
  if (overview.approved.length > 0) {
    context.stdout('Approved:');
    for (const entry of overview.approved) context.stdout(`  ${entry.platform}  ${entry.name ?? '(no name)'}  ${entry.sender}  since ${formatTime(entry.at)}`);
  }
  if (overview.denied.length > 0) {
    context.stdout('Denied:');
    for (const entry of overview.denied) context.stdout(`  ${entry.platform}  ${entry.name ?? '(no name)'}  ${entry.sender}  since ${formatTime(entry.at)}`);
  }
}
