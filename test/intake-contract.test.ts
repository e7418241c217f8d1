import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { platformModules } from '../src/main/gateway/platforms/registry';
import { intakeRow } from './support/intake-table';

describe('the intake contract', () => {
  const networkPlatforms = platformModules().map((module) => [module.info.name, module.intake] as const);

  it('is written in docs/platforms.md as the code declares it, one row per network platform', () => {
    const docs = readFileSync(new URL('../docs/platforms.md', import.meta.url), 'utf8');
    const rows = networkPlatforms.map(([platform, contract]) => intakeRow(platform, contract));
    expect(docs.split('\n'), `docs/platforms.md must hold these rows:\n${rows.join('\n')}`).toEqual(expect.arrayContaining(rows));
  });

  it('keeps messages for a stated time wherever a platform is not push-only', () => {
    for (const [platform, contract] of networkPlatforms) {
      if (contract.kind === 'push-only') expect(contract.keeps.kind, platform).toBe('none');
      else expect(contract.keeps.kind, platform).not.toBe('none');
    }
  });
});
