/// <reference lib="dom" />
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { DeliveryRow, GatewayOverview } from '../src/shared/api';
import { isOwed } from '../src/main/gateway/ledger/states';
import { trayView } from '../src/main/tray-state';
import { connectApi } from './support/api-socket';
import { launchChromium } from './support/browser';
import { HOMING_BIN, startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { freePort } from './support/ports';
import { count, openWindow, runDemo, showView } from './window-fixtures/window-page';

/**
 * Issue 13, point 4: one vocabulary from the core's one definition of owed
 * (ledger/states.ts). On the demo data, the header, the nav badge, the tiles,
 * the tabs, the tray tooltip, the sweep and the CLI give the same numbers, and
 * each row's label matches its state.
 */

let browser: Browser;
let dataDir: string;
let gateway: RunningGateway;
beforeAll(async () => {
  browser = await launchChromium();
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-words-'));
  runDemo(dataDir, ['--irc-port', String(await freePort())]);
  gateway = await startHeadlessGateway(['--data-dir', dataDir]);
});
afterAll(async () => {
  await gateway?.stop();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function cli(...args: string[]): unknown {
  const result = spawnSync(process.execPath, [HOMING_BIN, ...args, '--json', '--data-dir', dataDir], { encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

/** The kinds each tab may hold, by the core's definition. */
const TAB_KINDS: Record<string, readonly string[]> = {
  Owed: ['waiting', 'sending', 'retrying'],
  'Given up': ['needs-you', 'given-up', 'discarded'],
  Delivered: ['delivered'],
};

async function rowsOf(page: Page, tab: string): Promise<{ kind: string; why: string; state: string }[]> {
  await page.getByRole('tab', { name: tab }).click();
  await expect.poll(() => page.getByTestId('delivery-list').getAttribute('aria-label')).toMatch(new RegExp(`^${tab} replies`));
  await page.waitForTimeout(300);
  return page.getByTestId('delivery-row').evaluateAll((rows) =>
    rows.map((row) => ({
      kind: row.querySelector('[data-testid="delivery-kind"]')!.textContent!,
      why: row.querySelector('[data-testid="delivery-why"]')!.textContent!,
      state: row.getAttribute('data-state')!,
    })),
  );
}

describe('one vocabulary on the demo data', () => {
  for (const width of [360, 1280]) {
    it(`counts agree everywhere at ${width} px, and each row's label matches its state`, async () => {
      const api = await connectApi(gateway);
      const overview = await api.call<GatewayOverview>('getOverview');
      api.close();
      const { owed } = overview.deliveries;
      expect(owed).toBe(4);
      const givenUp = overview.deliveries.failedPermanently + overview.deliveries.abandoned + overview.deliveries.discarded;

      // The CLI: its rows counted with the core's isOwed, and its sweep (through the running gateway).
      const listed = cli('deliveries', 'list') as { deliveries: DeliveryRow[] };
      expect(listed.deliveries.filter((row) => isOwed({ state: row.state, next_attempt_at: row.nextAttemptAt })).length).toBe(owed);
      expect((cli('sweep') as { owed: number }).owed).toBe(owed);
      // The tray, drawn from the same overview.
      const tray = trayView({ gateway: { state: 'running', crashes: 0 }, overview, paused: false, autostart: false, secretsUnencrypted: false });
      expect(tray.owed).toBe(owed);
      expect(tray.tooltip).toContain(`${owed} owed`);

      const { page, errors } = await openWindow(browser, gateway.url, { width });
      await expect.poll(() => page.getByTestId('summary').textContent()).toMatch(new RegExp(`^${owed} replies owed · 1 needs you`));
      expect(await page.getByTestId('nav-owed').textContent()).toBe(String(owed));
      await showView(page, 'deliveries');
      await page.getByTestId('delivery-row').first().waitFor();
      expect(await count(page, 'owed')).toBe(owed);
      expect(await count(page, 'abandoned')).toBe(givenUp);

      const tabs: Record<string, number> = {};
      for (const tab of Object.keys(TAB_KINDS)) {
        const rows = await rowsOf(page, tab);
        tabs[tab] = rows.length;
        for (const row of rows) {
          expect(TAB_KINDS[tab]).toContain(row.kind.replace(' ', '-'));
          // The "why" line starts with the same word as the badge.
          expect(row.why.toLowerCase().startsWith(`${row.kind}:`), `${row.kind} / ${row.why}`).toBe(true);
        }
      }
      expect(tabs.Owed).toBe(owed);
      expect(tabs['Given up']).toBe(givenUp);

      // The next automatic try is shown: the retrying row's, and IRC's reconnect for the rows waiting for it.
      await page.getByRole('tab', { name: 'Owed' }).click();
      await page.getByTestId('next-try').filter({ hasText: /^next try \d/ }).first().waitFor();
      await page.getByTestId('next-try').filter({ hasText: /^IRC reconnects \d/ }).first().waitFor();

      // The sweep says the same number.
      await showView(page, 'status');
      await page.getByRole('button', { name: 'Sweep now' }).click();
      await page.getByText(new RegExp(`${owed} still owed`)).waitFor();
      await expect.poll(() => page.getByTestId('last-sweep').textContent()).toMatch(new RegExp(`found ${owed} owed`));

      // Retry all asks first and says how many given-up replies it brings back.
      await showView(page, 'deliveries');
      await page.getByRole('button', { name: 'Retry all for IRC' }).click();
      const dialog = page.getByRole('dialog', { name: 'Retry all for IRC?' });
      await dialog.waitFor();
      expect(await dialog.textContent()).toMatch(/1 reply that Homing is retrying .*; 3 replies that had been given up are brought back/);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await count(page, 'abandoned')).toBe(givenUp);
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});
