import { dataDirToUse, parseCommandArgs, type Command } from './command';
import type { SweepReport } from '../../shared/api';
import { changeLedger, deliveryPolicy } from './ledger-access';

const USAGE = `Usage: homing sweep [--json] [--data-dir DIR]

  Applies the ledger's rules now: abandons rows past the attempt cap or the
  stale cutoff, prunes delivered rows past the retention period, and reports
  what is still owed. With a gateway running on the data directory, it asks
  that gateway to sweep (and it sends what it claims); with none, the sweep
  runs here, connected to no chat platform, so it claims and sends nothing.

  --json          machine-readable output
  --data-dir DIR  data directory (default: $HOMING_DATA_DIR, else the tray app's)`;

export const sweepCommand: Command = {
  name: 'sweep',
  summary: 'apply the delivery rules now and report what is owed',
  usage: USAGE,
  async run(args, context) {
    const { values } = parseCommandArgs('sweep', args, { json: { type: 'boolean' }, 'data-dir': { type: 'string' } });
    const dataDir = dataDirToUse('sweep', values['data-dir'], context.env);
    // With a gateway running, the sweep is its own (it sends what it claims);
    // else this process sweeps with no platform connected: it claims and sends nothing.
    // The gateway's own rules: a sweep on the defaults could abandon what the user's policy keeps.
    const policy = deliveryPolicy(dataDir);
    if (!policy.ok) throw new Error(`${policy.error} — not sweeping: the attempt cap and stale cutoff come from that section`);
    const outcome = await changeLedger(
      dataDir,
      { method: 'sweepNow', params: undefined, read: (value) => value as SweepReport },
      (ledger) => ledger.sweepRecoverable({ now: Date.now(), deliverablePlatforms: [] }).report,
      policy.value,
    );
    const report: SweepReport = outcome.value ?? { claimed: 0, abandoned: 0, pruned: 0, waitingForPlatform: 0, owed: 0 };
    if (outcome.via === 'gateway') {
      if (values.json) {
        context.stdout(JSON.stringify({ ...report, via: 'gateway' }, null, 2));
        return 0;
      }
      context.stdout(`Swept ${dataDir} through the running gateway: ${report.claimed} claimed and being sent.`);
      context.stdout(`  still owed          ${report.owed}`);
      context.stdout(`  waiting to be sent  ${report.waitingForPlatform}`);
      context.stdout(`  abandoned now       ${report.abandoned} (attempt cap or stale cutoff)`);
      context.stdout(`  pruned              ${report.pruned} delivered rows past retention`);
      return 0;
    }
    if (values.json) {
      context.stdout(JSON.stringify({ ...report, connectedPlatforms: [] }, null, 2));
      return 0;
    }
    context.stdout(`Swept ${dataDir}: nothing claimed or sent — this command connects to no chat platform; the running gateway sends what is owed.`);
    context.stdout(`  still owed          ${report.owed}`);
    context.stdout(`  waiting to be sent  ${report.waitingForPlatform}`);
    context.stdout(`  abandoned now       ${report.abandoned} (attempt cap or stale cutoff)`);
    context.stdout(`  pruned              ${report.pruned} delivered rows past retention`);
    return 0;
  },
};
