/**
 * What `homing service install` writes: a systemd user unit (Linux), a launchd
 * agent (macOS) and a Task Scheduler task (Windows) that start the headless
 * gateway at login and again whenever it stops. Pure functions of a
 * ServiceSpec, so the tests check exactly what a user gets.
 *
 * Why restarting matters: the delivery ledger's promise leans on a gateway
 * coming back after a crash (a new one takes over what the dead one owed at
 * once), and on a home server nothing else starts it.
 */

/** The systemd unit's name, the launchd label, the scheduled task's name. */
export const SERVICE_NAME = 'homing';
export const SYSTEMD_UNIT = `${SERVICE_NAME}.service`;
export const LAUNCHD_LABEL = 'org.homing.gateway';
export const WINDOWS_TASK = '\\Homing\\Gateway';

/** systemd learnt RestartSteps= and RestartMaxDelaySec= (a restart delay that grows) in version 254. */
export const SYSTEMD_BACKOFF_VERSION = 254;

export interface ServiceSpec {
  /** The program that runs the CLI: Node's own path (process.execPath). */
  readonly node: string;
  /** bin/homing.js, absolute. */
  readonly entry: string;
  readonly dataDir: string;
  readonly configFile?: string | undefined;
  readonly port?: number | undefined;
  /** PATH as the user has it now: a command or ACP agent is looked up in it (a service manager's own PATH is minimal). */
  readonly path?: string | undefined;
  /** Where launchd writes the gateway's output (macOS has no journal for agents). */
  readonly logFile?: string | undefined;
}

/** `homing gateway …` as the service runs it. */
export function gatewayArgs(spec: ServiceSpec): string[] {
  return [
    spec.entry,
    'gateway',
    '--data-dir',
    spec.dataDir,
    ...(spec.configFile !== undefined ? ['--config', spec.configFile] : []),
    ...(spec.port !== undefined ? ['--port', String(spec.port)] : []),
  ];
}

/** A path or value no service file can carry faithfully. */
export class UnrepresentableError extends Error {
  override readonly name = 'UnrepresentableError';
}

function refuseControlCharacters(value: string, what: string): void {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new UnrepresentableError(`${what} contains a line break or control character; a service file cannot hold it`);
}

/**
 * One word of a systemd command line or assignment (systemd.syntax(7),
 * systemd.service(5) "Command lines"): double-quoted when it has anything but
 * plain path characters, with `\` and `"` escaped and `%` doubled (else a unit
 * specifier). In a command line `$` is doubled too (else an environment
 * variable is substituted); in Environment= it has no special meaning.
 */
export function systemdWord(value: string, what = 'a value', where: 'command' | 'environment' = 'command'): string {
  refuseControlCharacters(value, what);
  const specifiers = value.replace(/%/g, '%%');
  const escaped = where === 'command' ? specifiers.replace(/\$/g, '$$$$') : specifiers;
  if (/^[A-Za-z0-9_@+=:,./-]+$/.test(escaped) && escaped !== '') return escaped;
  return `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The systemd user unit (~/.config/systemd/user/homing.service).
 *
 * - Restart=always: after a crash, a kill or an exit with an error the gateway
 *   is started again; RestartSec waits a little so a failing start does not spin.
 * - StartLimitIntervalSec/StartLimitBurst: ten starts in ten minutes and systemd
 *   stops trying (the unit shows "failed"; `homing service status` and
 *   `homing doctor` say how to reset it). From systemd 254 the delay between
 *   restarts also grows, 2 s up to a minute (RestartSteps/RestartMaxDelaySec);
 *   older versions would warn about those keys, so they are left out there.
 * - KillSignal=SIGTERM, TimeoutStopSec: a clean stop (the gateway finishes what
 *   it is sending within its own deadline) before systemd kills it.
 * - The output goes to the journal (`journalctl --user -u homing`).
 */
export function systemdUnit(spec: ServiceSpec, options: { readonly systemdVersion?: number } = {}): string {
  const backoff = (options.systemdVersion ?? 0) >= SYSTEMD_BACKOFF_VERSION;
  const command = [spec.node, ...gatewayArgs(spec)].map((word) => systemdWord(word, 'a path of the command')).join(' ');
  return [
    '# Written by `homing service install`; `homing service uninstall` removes it.',
    '[Unit]',
    'Description=Homing gateway (headless): your local agent on your chat platforms',
    'Documentation=https://github.com/homing-app/homing#readme',
    'After=network-online.target',
    'Wants=network-online.target',
    'StartLimitIntervalSec=600',
    'StartLimitBurst=10',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${command}`,
    ...(spec.path !== undefined ? [`Environment=${systemdWord(`PATH=${spec.path}`, 'PATH', 'environment')}`] : []),
    'Restart=always',
    'RestartSec=2',
    ...(backoff ? ['RestartSteps=5', 'RestartMaxDelaySec=60'] : []),
    'KillSignal=SIGTERM',
    'TimeoutStopSec=15',
    'StandardOutput=journal',
    'StandardError=journal',
    `SyslogIdentifier=${SERVICE_NAME}`,
    'NoNewPrivileges=yes',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

/** Text for an XML element or attribute. */
export function xmlText(value: string, what = 'a value'): string {
  refuseControlCharacters(value, what);
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/**
 * The launchd agent (~/Library/LaunchAgents/org.homing.gateway.plist).
 * RunAtLoad starts it at login; KeepAlive starts it again whenever it exits;
 * ThrottleInterval keeps a failing start from spinning (launchd waits that long
 * between starts).
 */
export function launchdPlist(spec: ServiceSpec): string {
  const args = [spec.node, ...gatewayArgs(spec)].map((arg) => `    <string>${xmlText(arg, 'a path of the command')}</string>`);
  const log = spec.logFile !== undefined ? xmlText(spec.logFile, 'the log file') : undefined;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  <string>${LAUNCHD_LABEL}</string>`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...args,
    '  </array>',
    ...(spec.path !== undefined
      ? ['  <key>EnvironmentVariables</key>', '  <dict>', '    <key>PATH</key>', `    <string>${xmlText(spec.path, 'PATH')}</string>`, '  </dict>']
      : []),
    '  <key>RunAtLoad</key>',
    '  <true/>',
    '  <key>KeepAlive</key>',
    '  <true/>',
    '  <key>ThrottleInterval</key>',
    '  <integer>10</integer>',
    '  <key>ProcessType</key>',
    '  <string>Background</string>',
    ...(log !== undefined ? ['  <key>StandardOutPath</key>', `  <string>${log}</string>`, '  <key>StandardErrorPath</key>', `  <string>${log}</string>`] : []),
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}

/**
 * One argument of a Windows command line, quoted the way the C runtime's
 * parser (CommandLineToArgvW) reads it back: backslashes before a quote are
 * doubled, a quote is escaped.
 */
export function windowsArg(value: string): string {
  if (value !== '' && !/[\s"]/.test(value)) return value;
  return `"${value.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, '$1$1')}"`;
}

/**
 * The scheduled task (Task Scheduler schema 1.2, for `schtasks /Create /XML`):
 * started at the user's logon, restarted every minute after a failure (999
 * times), never stopped for running long or for a battery, one instance at a
 * time. `userId` is DOMAIN\user.
 */
export function windowsTask(spec: ServiceSpec, userId: string): string {
  const args = gatewayArgs(spec).map(windowsArg).join(' ');
  const user = xmlText(userId, 'the user name');
  return [
    '<?xml version="1.0" encoding="UTF-16"?>',
    '<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">',
    '  <RegistrationInfo>',
    '    <Description>Homing gateway (headless): your local agent on your chat platforms. Written by homing service install.</Description>',
    `    <URI>${xmlText(WINDOWS_TASK)}</URI>`,
    '  </RegistrationInfo>',
    '  <Triggers>',
    '    <LogonTrigger>',
    '      <Enabled>true</Enabled>',
    `      <UserId>${user}</UserId>`,
    '    </LogonTrigger>',
    '  </Triggers>',
    '  <Principals>',
    '    <Principal id="Author">',
    `      <UserId>${user}</UserId>`,
    '      <LogonType>InteractiveToken</LogonType>',
    '      <RunLevel>LeastPrivilege</RunLevel>',
    '    </Principal>',
    '  </Principals>',
    '  <Settings>',
    '    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>',
    '    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>',
    '    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>',
    '    <AllowHardTerminate>true</AllowHardTerminate>',
    '    <StartWhenAvailable>true</StartWhenAvailable>',
    '    <RunOnlyIfNetworkAvailable>false</RunOnlyIfNetworkAvailable>',
    '    <AllowStartOnDemand>true</AllowStartOnDemand>',
    '    <Enabled>true</Enabled>',
    '    <Hidden>false</Hidden>',
    '    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>',
    '    <RestartOnFailure>',
    '      <Interval>PT1M</Interval>',
    '      <Count>999</Count>',
    '    </RestartOnFailure>',
    '  </Settings>',
    '  <Actions Context="Author">',
    '    <Exec>',
    `      <Command>${xmlText(spec.node, 'the path of Node')}</Command>`,
    `      <Arguments>${xmlText(args, 'the command line')}</Arguments>`,
    '    </Exec>',
    '  </Actions>',
    '</Task>',
    '',
  ].join('\r\n');
}
