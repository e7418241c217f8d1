import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Gateway } from './gateway';
import { silentLogger } from './logger';

let dataDir: string;
let gateway: Gateway;
const configFile = () => join(dataDir, 'config.json');
const stillAnswers = async () => expect(await gateway.api.dispatch('getStatus', undefined)).toMatchObject({ ok: true, value: { state: 'running' } });

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'homing-gw-config-'));
  writeFileSync(configFile(), '{ "maxConcurrentTurns": 3 }\n');
  gateway = Gateway.start({ dataDir, mode: 'app', version: '0.0.0-test', logger: silentLogger, detectSleep: false, detectOllama: false });
  await gateway.ready;
});
afterEach(async () => {
  await gateway.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** An IRC section for a server that is not there: the adapter keeps trying, which is all these tests need. */
const irc = (port: number, enabled = true) => ({ host: '127.0.0.1', port, tls: false, nick: 'homing-test', channels: [], allow: [], enabled });

describe('setConfig on the running gateway', () => {
  it.each([
    ['identityLinks that are not <platform>:<id>', { sessions: { identityLinks: { a: ['abc'] } } }, /identityLinks\.a\[0\]: must look like/],
    ['one id linked to two names', { sessions: { identityLinks: { alice: ['irc:x'], bob: ['irc:x'] } } }, /"irc:x" is already linked to "alice"/],
    ['a __proto__ key', JSON.parse('{ "sessions": { "__proto__": { "dmScope": "main" } } }'), /sessions\.__proto__: "__proto__" is not allowed as a key/],
  ])('refuses %s with bad-request, writes nothing and keeps answering', async (_name, config, message) => {
    const before = readFileSync(configFile(), 'utf8');
    const result = await gateway.api.dispatch('setConfig', { config });
    expect(result).toMatchObject({ ok: false, error: { code: 'bad-request', message: expect.stringMatching(message) } });
    expect(readFileSync(configFile(), 'utf8')).toBe(before);
    await stillAnswers();
  });

  it('answers 10 000 levels of nesting with a clear bad-request, not internal', async () => {
    let deep: unknown = {};
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const result = await gateway.api.dispatch('setConfig', { config: { sessions: deep } });
    expect(result).toMatchObject({ ok: false, error: { code: 'bad-request', message: expect.stringMatching(/nested more than 16 levels deep/) } });
    await stillAnswers();
  });

  it('refuses with conflict, and leaves the file alone, when it holds an error made by hand', async () => {
    writeFileSync(configFile(), '{ "maxConcurrentTurns": 3, }\n');
    const result = await gateway.api.dispatch('setConfig', { config: { maxConcurrentTurns: 5 } });
    expect(result).toMatchObject({ ok: false, error: { code: 'conflict', message: expect.stringMatching(/edits made to it by hand/) } });
    expect(readFileSync(configFile(), 'utf8')).toBe('{ "maxConcurrentTurns": 3, }\n');
  });

  it('applies changes in order, each finished before the next: enable then disable IRC ends with IRC stopped', async () => {
    // Not awaited one by one: the second change's restart of IRC must not outlive the third's removal.
    await Promise.all([
      gateway.config.write({ platforms: { irc: irc(1) } }),
      gateway.config.write({ platforms: { irc: irc(2) } }),
      gateway.config.write({ platforms: { irc: irc(2, false) } }),
    ]);
    await gateway.config.applied();
    expect(gateway.platforms.list().map((platform) => platform.name)).toEqual(['local']);
  });

  it('puts a new delivery policy in force on reload', async () => {
    expect(gateway.deliveries.ledger.policy.maxAttempts).toBe(5);
    writeFileSync(configFile(), JSON.stringify({ maxConcurrentTurns: 3, delivery: { maxAttempts: 9, staleHours: 2, leaseSeconds: 10 } }));
    await gateway.config.reload();
    expect(gateway.deliveries.ledger.policy).toMatchObject({ maxAttempts: 9, staleAfterMs: 2 * 3600_000, leaseMs: 10_000 });
    await stillAnswers();
  });
});
