import { resolve } from 'node:path';
import { resolveDataDir } from '../gateway/data-dir';
import { needsUser, runDoctor, type CheckLevel } from '../doctor/doctor';
import { HOMING_VERSION } from '../version';
import { parseCommandArgs, UsageError, type Command } from './command';
import { serviceHostOf } from './service-command';

const USAGE = `Usage: homing doctor [--data-dir DIR] [--config FILE] [--timeout SECONDS] [--json]

  Checks what usually goes wrong and says what to do: Node's version, the data
  directory and its permissions, whether a gateway runs on it, config.json, the
  agent answering, each enabled platform's server and credentials (secrets are
  never printed), the window's port, free disk space, and the service.
  Changes nothing. Exit code 1 when something needs you, else 0.

  --data-dir DIR     data directory (default: $HOMING_DATA_DIR, else the tray app's)
  --config FILE      configuration file (default: config.json in the data directory)
  --timeout SECONDS  how long each connection test may take (default 10)
  --json             the findings as JSON`;

const MARKS: Record<CheckLevel, string> = { ok: '✓', warn: '!', fail: '✗', skip: '–' };

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check the setup (agent, platforms, data directory, service) and say what to fix',
  usage: USAGE,
  async run(args, context) {
    const { values } = parseCommandArgs('doctor', args, {
      'data-dir': { type: 'string' },
      config: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
    });
    let timeoutMs = 10_000;
    if (values.timeout !== undefined) {
      if (!/^\d{1,3}(\.\d+)?$/.test(values.timeout) || Number(values.timeout) <= 0) {
        throw new UsageError(`doctor: --timeout takes a number of seconds, not "${values.timeout}"`);
      }
      timeoutMs = Number(values.timeout) * 1000;
    }
    const dataDir = resolveDataDir(values['data-dir'], context.env);
    const findings = await runDoctor({
      dataDir,
      ...(values.config !== undefined ? { configFile: resolve(values.config) } : {}),
      env: context.env,
      timeoutMs,
      serviceHost: serviceHostOf(context),
    });
    const failing = needsUser(findings);
    if (values.json) {
      context.stdout(JSON.stringify({ version: HOMING_VERSION, dataDir, needsYou: failing, findings }, null, 2));
      return failing ? 1 : 0;
    }
    context.stdout(`Homing ${HOMING_VERSION} doctor — data directory ${dataDir}`);
    context.stdout('');
    for (const finding of findings) {
      context.stdout(`  ${MARKS[finding.level]} ${finding.check}: ${finding.message}`);
      if (finding.fix && finding.level !== 'ok') context.stdout(`      → ${finding.fix}`);
    }
    const fails = findings.filter((finding) => finding.level === 'fail').length;
    const warns = findings.filter((finding) => finding.level === 'warn').length;
    context.stdout('');
    context.stdout(
      fails > 0
        ? `${fails} thing${fails === 1 ? '' : 's'} need${fails === 1 ? 's' : ''} you (✗)${warns > 0 ? `, ${warns} worth a look (!)` : ''}.`
        : warns > 0
          ? `Nothing needs you; ${warns} thing${warns === 1 ? '' : 's'} worth a look (!).`
          : 'All good.',
    );
    return failing ? 1 : 0;
  },
};
