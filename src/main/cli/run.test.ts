import { describe, expect, it } from 'vitest';
import { capture } from './fixtures/capture';
import { runCli } from './run';

describe('homing (the CLI)', () => {
  it('prints help listing the commands', async () => {
    const { context, out } = capture();
    expect(await runCli(['--help'], context)).toBe(0);
    expect(out.join('\n')).toMatch(/Usage: homing <command>/);
    expect(out.join('\n')).toMatch(/gateway\s+run the gateway headless/);
  });

  it('prints the version', async () => {
    const { context, out } = capture();
    expect(await runCli(['--version'], context)).toBe(0);
    expect(out).toEqual([expect.stringMatching(/^\d+\.\d+\.\d+$/)]);
  });

  it.each([
    [['--frobnicate'], /^homing: unknown flag --frobnicate \(see homing --help\)$/],
    [['frobnicate'], /^homing: unknown command "frobnicate"/],
    [['gateway', '--frobnicate'], /^homing: gateway: unknown flag '--frobnicate'/],
    [['gateway', '--port', 'eighty'], /^homing: gateway: --port must be a number from 0 to 65535, not "eighty"/],
    [['gateway', '--port', '70000'], /--port must be a number from 0 to 65535/],
    [['gateway', '--port'], /^homing: gateway: Option '--port <value>' argument missing/],
    [['gateway', 'extra'], /^homing: gateway: unexpected argument "extra"/],
    [['gateway', '--config', '/nonexistent/homing-config.json'], /^homing: gateway: --config \/nonexistent\/homing-config\.json: no such file/],
  ])('rejects %j with one clear line and exit code 2', async (argv, message) => {
    const { context, err, out } = capture();
    expect(await runCli(argv, context)).toBe(2);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(message);
    expect(out).toEqual([]);
  });

  it('prints a command\'s usage for `homing gateway --help`', async () => {
    const { context, out } = capture();
    expect(await runCli(['gateway', '--help'], context)).toBe(0);
    expect(out.join('\n')).toMatch(/--data-dir DIR/);
  });
});
