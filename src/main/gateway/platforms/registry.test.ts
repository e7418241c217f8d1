import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PLATFORM_INFO, SECRET_NAMES } from '../../../shared/platforms';
import { DEFAULT_CONFIG, homingConfigSchema } from '../homing-config';
import { silentLogger } from '../logger';
import { platformWanted } from './catalog';
import type { PlatformDeps } from './platform-module';
import { PLATFORM_MODULES, platformModules } from './registry';

/** The least each platform's section needs to be valid. */
const SECTIONS = {
  telegram: {},
  matrix: { homeserver: 'https://matrix.example.org', user: '@homing:example.org' },
  discord: {},
  slack: {},
  signal: { account: '+4915112345678' },
  xmpp: { jid: 'homing@example.org' },
  irc: { host: 'irc.example.org', nick: 'homing' },
  email: { address: 'homing@example.org', imap: { host: 'imap.example.org' }, smtp: { host: 'smtp.example.org' } },
};

const dataDir = mkdtempSync(join(tmpdir(), 'homing-registry-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const secrets = new Map<string, string>(SECRET_NAMES.map((name) => [name, `secret-of-${name}`]));
const deps: PlatformDeps = {
  env: {},
  secrets: { get: (name) => secrets.get(name) },
  logger: silentLogger,
  clock: { now: () => 0, monotonic: () => 0 } as never,
  dataDir,
  pairing: { isApproved: () => false, request: () => undefined, owed: () => [], told: () => {} },
};

describe('the platform registry', () => {
  it('has one module per platform the window knows, each under its own name and with its entry', () => {
    expect(Object.keys(PLATFORM_MODULES)).toEqual(PLATFORM_INFO.map((info) => info.name));
    for (const [name, module] of Object.entries(PLATFORM_MODULES)) {
      const info = PLATFORM_INFO.find((entry) => entry.name === name)!;
      expect(module.info).toBe(info);
      expect([module.name, module.label, module.secretNames, module.pairing]).toEqual([name, info.label, info.secrets, info.pairing !== 'none']);
    }
  });

  it('makes config.json’s platforms section from the modules’ schemas, and nothing else', () => {
    const config = homingConfigSchema.parse({ platforms: SECTIONS });
    expect(Object.keys(config.platforms).sort()).toEqual(Object.keys(PLATFORM_MODULES).sort());
    expect(homingConfigSchema.safeParse({ platforms: { myspace: {} } }).success).toBe(false);
    expect(DEFAULT_CONFIG.platforms).toEqual({});
  });

  describe.each(platformModules().map((module) => [module.info.name, module] as const))('%s', (name, module) => {
    const section = module.configSchema.parse(SECTIONS[name]);

    it('declares the send limits, dedup window and intake contract its adapter has', () => {
      const adapter = module.create(section, deps);
      expect(adapter.platform).toBe(name);
      expect(adapter.limits).toEqual(module.sendLimits(section));
      expect(adapter.intake).toBe(module.intake);
      const window = module.dedupWindow;
      expect(adapter.idempotentSends).toBe(window.kind !== 'none');
      if (window.kind === 'for') expect(adapter.dedupWindowMs).toBe(window.ms);
      if (window.kind === 'by-server') {
        expect(adapter.dedupWindowMs).toBeGreaterThanOrEqual(window.atLeastMs);
        expect(adapter.dedupWindowMs).toBeLessThanOrEqual(window.atMostMs);
      }
    });

    it('takes its settings from the section and its secrets from the store, never a secret in the settings', () => {
      const { settings } = module.settings(section, deps);
      expect(settings).not.toHaveProperty('enabled');
      expect(JSON.stringify(settings)).not.toContain('secret-of-');
    });

    it('changes its fingerprint with a secret, and holds the secret only as a hash', () => {
      const before = module.fingerprint(section, deps);
      for (const secret of module.info.secrets) {
        expect(before).not.toContain(`secret-of-${secret}`);
        const changed = module.fingerprint(section, { env: {}, secrets: { get: (asked) => (asked === secret ? 'another' : secrets.get(asked)) } });
        // Matrix logs in with the token when both are set: its password changing alone changes nothing.
        if (!(name === 'matrix' && secret === 'matrix.password')) expect(changed).not.toBe(before);
      }
    });

    it('says in words what is missing when its secret is not set, instead of starting', () => {
      if (name === 'irc') return; // an IRC server password is optional
      if (name === 'signal') return; // Signal has no secret in Homing: the keys are signal-cli's
      expect(() => module.create(section, { ...deps, secrets: { get: () => undefined } })).toThrow(/not set/);
    });

    it('is wanted by the gateway exactly while its section is enabled', () => {
      const wanted = (enabled: boolean) => platformWanted(homingConfigSchema.parse({ platforms: { [name]: { ...SECTIONS[name], enabled } } }), { ...deps, local: {} as never, tuning: {} });
      expect([...wanted(true).keys()]).toEqual(['local', name]);
      expect([...wanted(false).keys()]).toEqual(['local']);
    });
  });
});
