import { z } from 'zod';
import type { PlatformName } from '../../../shared/platforms';
import { discordModule } from './discord';
import { emailModule } from './email';
import { ircModule } from './irc';
import { matrixModule } from './matrix';
import { slackModule } from './slack';
import type { PlatformModule } from './platform-module';
import { signalModule } from './signal';
import { telegramModule } from './telegram';
import { xmppModule } from './xmpp';

/**
 * Every chat platform Homing can connect to: one module per platform in
 * src/shared/platforms.ts (a platform missing here, or one not there, does not
 * type-check; registry.test.ts checks that each module sits under its own name). The config schema, the adapters the gateway runs, the connection
 * test and the secret store all derive from this list.
 */
export const PLATFORM_MODULES = {
  telegram: telegramModule,
  matrix: matrixModule,
  discord: discordModule,
  slack: slackModule,
  signal: signalModule,
  xmpp: xmppModule,
  irc: ircModule,
  email: emailModule,
} as const satisfies { readonly [Name in PlatformName]: PlatformModule<z.ZodType<{ readonly enabled: boolean }>, never> };

type Modules = typeof PLATFORM_MODULES;

/** A platform's config section, as config.json holds it once validated. */
export type PlatformSection<Name extends PlatformName> = z.output<Modules[Name]['configSchema']>;

/** The adapter timings tests shorten, per platform; real use takes the defaults. */
export type PlatformTuning = { readonly [Name in PlatformName]?: Exclude<Parameters<Modules[Name]['create']>[2], undefined> };

/** The modules in the order the window shows them. */
export function platformModules(): readonly PlatformModule[] {
  return Object.values(PLATFORM_MODULES) as readonly PlatformModule[];
}

/** config.json's `platforms`: one optional section per module, and nothing else. */
export const platformsSchema = z
  .strictObject(
    Object.fromEntries(Object.entries(PLATFORM_MODULES).map(([name, module]) => [name, module.configSchema.optional()])) as {
      [Name in PlatformName]: z.ZodOptional<Modules[Name]['configSchema']>;
    },
  )
  .default({});
