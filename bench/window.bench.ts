import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { CHROMIUM_PATH, launchChromium } from '../test/support/browser';
import { REPO_ROOT, startHeadlessGateway, type RunningGateway } from '../test/support/gateway-process';
import { openWindow, runDemo } from '../test/window-fixtures/window-page';
import { median, type Bench } from './harness';
import { freePort } from '../test/support/ports';

const OWED = 10_000;
const RUNS = 5;

/**
 * The Deliveries list with 10 000 owed rows (`homing demo --owed 10000`, the
 * real ledger) in Debian's Chromium against a headless `homing gateway`: time
 * from the click on Deliveries to the first row on screen, and from a jump to
 * the bottom of the list to its last row. Median of a few page loads. Without
 * Chromium or a build it prints why it was skipped.
 */
const bench: Bench = {
  name: `window — Deliveries with ${OWED} owed rows, Chromium, median of ${RUNS} page loads`,
  async run(context) {
    const missing = missingPrerequisite();
    if (missing) {
      context.report('skipped', { reason: missing });
      return;
    }
    let browser: Browser;
    try {
      browser = await launchChromium();
    } catch (error) {
      context.report('skipped', { reason: `Chromium did not start: ${firstLine(error)}` });
      return;
    }
    let gateway: RunningGateway | undefined;
    try {
      const dataDir = context.tmpDir();
      runDemo(dataDir, ['--irc-port', String(await freePort()), '--owed', String(OWED)]);
      gateway = await startHeadlessGateway(['--data-dir', dataDir]);
      const firstRender: number[] = [];
      const scrollToLast: number[] = [];
      let rows = 0;
      for (let run = 0; run < RUNS; run++) {
        const { page, errors } = await openWindow(browser, gateway.url);
        const clicked = performance.now();
        await page.locator('nav button[data-view="deliveries"]').click();
        await page.getByTestId('delivery-row').first().waitFor();
        firstRender.push(performance.now() - clicked);

        rows = Number(await page.getByTestId('count-owed').textContent());
        const jumped = performance.now();
        await page.getByTestId('delivery-list').evaluate((element) => (element.scrollTop = element.scrollHeight));
        await page.locator(`[data-testid="delivery-row"][aria-posinset="${rows}"]`).waitFor();
        scrollToLast.push(performance.now() - jumped);
        if (errors.length > 0) throw new Error(`the window threw: ${errors.join('; ')}`);
        await page.close();
      }
      context.report('time to first render', { owed_rows: rows, median_ms: median(firstRender), min_ms: Math.min(...firstRender), max_ms: Math.max(...firstRender) });
      context.report('scroll to the last row', { owed_rows: rows, median_ms: median(scrollToLast), min_ms: Math.min(...scrollToLast), max_ms: Math.max(...scrollToLast) });
    } finally {
      await browser.close();
      await gateway?.stop();
    }
  },
};
export default bench;

/** Why this bench cannot run here, or undefined. */
function missingPrerequisite(): string | undefined {
  if (!existsSync(CHROMIUM_PATH)) return `no Chromium at ${CHROMIUM_PATH} (install Debian's chromium package, or set HOMING_CHROMIUM)`;
  for (const built of [join('out', 'main', 'cli.js'), join('out', 'renderer', 'index.html')]) {
    if (!existsSync(join(REPO_ROOT, built))) return `Homing is not built (no ${built}): run \`npm run build\``;
  }
  return undefined;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
