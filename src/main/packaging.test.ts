import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RELEASE_REPOSITORY } from './gateway/updates/release-check';

// js-yaml comes with electron-builder (the packager that reads this file), so it is there whenever packaging is.
const { load } = createRequire(import.meta.url)('js-yaml') as { load: (text: string) => unknown };
const root = fileURLToPath(new URL('../../', import.meta.url));
const config = load(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as Record<string, unknown>;

describe('the packaged app (electron-builder.yml)', () => {
  it('flips the Electron fuses that let a local program run code as the app', () => {
    expect(config.electronFuses).toMatchObject({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      onlyLoadAppFromAsar: true,
      enableEmbeddedAsarIntegrityValidation: true,
    });
    // onlyLoadAppFromAsar and the integrity check need the app packed as an asar.
    expect(config.asar).not.toBe(false);
  });

  it('names only fuses this electron-builder knows (a misspelt one would be silently skipped)', () => {
    const schema = JSON.parse(readFileSync(join(root, 'node_modules', 'app-builder-lib', 'scheme.json'), 'utf8')) as {
      definitions: { FuseOptionsV1: { properties: Record<string, unknown> } };
    };
    const known = Object.keys(schema.definitions.FuseOptionsV1.properties);
    expect(Object.keys(config.electronFuses as object).filter((name) => !known.includes(name))).toEqual([]);
  });

  it('publishes where both update paths look: electron-updater (app-update.yml) and the headless check', () => {
    const [owner, repo] = RELEASE_REPOSITORY.split('/');
    expect(config.publish).toMatchObject({ provider: 'github', owner, repo });
  });
});
