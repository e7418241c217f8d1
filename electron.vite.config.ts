import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';

// Three bundles. `main` holds three entries that share the gateway core:
//   index        — the Electron shell (tray, windows, the gateway supervisor)
//   gateway-host — the gateway core inside an Electron utilityProcess
//   cli          — `homing …` under plain Node, including the headless gateway
// The build needs no Electron binary: electron-vite only reads electron's package.json.
export default defineConfig({
  main: {
    build: {
      rolldownOptions: {
        input: {
          index: resolve('src/main/index.ts'),
          'gateway-host': resolve('src/main/gateway-host.ts'),
          cli: resolve('src/main/cli/main.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      rolldownOptions: {
        input: { index: resolve('src/preload/index.ts') },
        // A sandboxed preload cannot be an ES module.
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve('src/renderer'),
    // Relative asset URLs: the same build loads from file:// in Electron and from
    // the headless server's http://127.0.0.1:<port>/.
    base: './',
    plugins: [react()],
    build: {
      rolldownOptions: { input: resolve('src/renderer/index.html') },
    },
  },
});
