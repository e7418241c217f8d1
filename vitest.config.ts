import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Tests start real processes and servers: keep parallelism to the two cores.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Every gateway a test starts, in process or spawned, inherits this: none asks GitHub for a new release.
    env: { HOMING_NO_UPDATE_CHECK: '1' },
  },
});
