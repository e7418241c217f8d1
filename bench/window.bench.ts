/**
 * Time to first render of the Deliveries list with 10 000 owed rows: `homing demo
 * --owed 10000`, a headless gateway, Debian's Chromium. Prints the figure; run with
 * `npx tsx bench/window.bench.ts` after `npm run build`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from '../test/support/browser';
import { startHeadlessGateway } from '../test/support/gateway-process';
import { openWindow, runDemo } from '../test/window-fixtures/window-page';

const dataDir = mkdtempSync(join(tmpdir(), 'homing-window-bench-'));
runDemo(dataDir, ['--irc-port', '9', '--owed', '10000']);
const gateway = await startHeadlessGateway(['--data-dir', dataDir]);
const browser = await launchChromium();
try {
  const samples: number[] = [];
  for (let run = 0; run < 5; run++) {
    const { page } = await openWindow(browser, gateway.url);
    const started = performance.now();
    await page.locator('nav button[data-view="deliveries"]').click();
    await page.getByTestId('delivery-row').first().waitFor();
    samples.push(performance.now() - started);
    const scrollStart = performance.now();
    await page.getByTestId('delivery-list').evaluate((element) => (element.scrollTop = element.scrollHeight));
    const total = Number(await page.getByTestId('count-owed').textContent());
    await page.locator(`[data-testid="delivery-row"][aria-posinset="${total}"]`).waitFor();
    if (run === 0) console.log(`scroll to the last of ${total} owed rows: ${(performance.now() - scrollStart).toFixed(0)} ms`);
    await page.close();
  }
  samples.sort((a, b) => a - b);
  console.log(`Deliveries, 10 004 owed rows: time to first render median ${samples[2]!.toFixed(0)} ms (min ${samples[0]!.toFixed(0)}, max ${samples[4]!.toFixed(0)})`);
} finally {
  await browser.close();
  await gateway.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
