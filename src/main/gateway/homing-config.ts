import type { z } from 'zod';
import { configSchemaWith } from './config/schema';
import { platformsSchema } from './platforms/registry';

/**
 * config.json, validated in one place: the gateway's sections (config/schema.ts)
 * with one section per platform module (platforms/registry.ts). Every section is
 * optional: an empty (or missing) file is the embedded default — the local chat
 * and the built-in agent.
 */
export const homingConfigSchema = configSchemaWith(platformsSchema);

export type HomingConfig = z.output<typeof homingConfigSchema>;
export type HomingConfigInput = z.input<typeof homingConfigSchema>;

export const DEFAULT_CONFIG: HomingConfig = homingConfigSchema.parse({});
