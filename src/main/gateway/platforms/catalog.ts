import type { PlatformName } from '../../../shared/platforms';
import type { HomingConfig } from '../homing-config';
import { LOCAL_PLATFORM, type LocalAdapter } from './local/local-adapter';
import type { AdapterFactory } from './manager';
import type { PlatformDeps, PlatformModule } from './platform-module';
import { platformModules, type PlatformTuning } from './registry';

export type { PlatformTuning } from './registry';

export interface CatalogDeps extends PlatformDeps {
  readonly local: LocalAdapter;
  readonly tuning: PlatformTuning;
}

/**
 * The platforms a config asks for, each with a fingerprint of everything its
 * adapter is built from (secrets as a hash), so a config change restarts exactly
 * the adapters it touches. The local chat is always there.
 */
export function platformWanted(config: HomingConfig, deps: CatalogDeps): Map<string, { fingerprint: string; create: AdapterFactory }> {
  const wanted = new Map<string, { fingerprint: string; create: AdapterFactory }>();
  wanted.set(LOCAL_PLATFORM, { fingerprint: LOCAL_PLATFORM, create: () => deps.local });
  for (const module of platformModules()) {
    const section = sectionOf(config, module);
    if (!section?.enabled) continue;
    const tuning = deps.tuning[module.info.name];
    wanted.set(module.info.name, {
      fingerprint: module.fingerprint(section, deps),
      create: () => module.create(section, deps, tuning),
    });
  }
  return wanted;
}

/**
 * A module's section of a config. The config's `platforms` is built from the
 * same modules (registry.ts), so a module's name always finds its own schema's
 * output; TypeScript cannot follow that through a loop over the modules.
 */
export function sectionOf(config: Pick<HomingConfig, 'platforms'>, module: PlatformModule): { readonly enabled: boolean } | undefined {
  return config.platforms[module.info.name as PlatformName];
}
