import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { HOMING_BIN, REPO_ROOT } from '../support/gateway-process';

/** Where the window's screenshots go (named in the README's test section). */
export const SCREENSHOT_DIR = join(REPO_ROOT, 'test-results', 'screenshots');

export const VIEWS = ['conversations', 'deliveries', 'platforms', 'status'] as const;
export type ViewName = (typeof VIEWS)[number];

/** `homing demo` into `dataDir`, as a user would run it (the real session store and ledger fill it). */
export function runDemo(dataDir: string, args: string[] = []): void {
  const result = spawnSync(process.execPath, [HOMING_BIN, 'demo', '--data-dir', dataDir, ...args], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`homing demo failed (${result.status}): ${result.stderr}`);
}

export interface WindowOptions {
  readonly width?: number;
  readonly scheme?: 'light' | 'dark';
}

/** A page on the headless gateway's window; page errors fail the caller through `errors`. */
export async function openWindow(browser: Browser, url: string, options: WindowOptions = {}): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: options.width ?? 1280, height: 800 }, colorScheme: options.scheme ?? 'light' });
  // Well under the test's own timeout, so a step that hangs is named in the failure.
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(url);
  await page.getByTestId('summary').or(page.getByText('nothing owed')).first().waitFor({ timeout: 10_000 });
  return { page, errors };
}

export async function showView(page: Page, view: ViewName): Promise<void> {
  await page.locator(`nav button[data-view="${view}"]`).click();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/** The number in a Deliveries count box. */
export async function count(page: Page, key: string): Promise<number> {
  return Number(await page.getByTestId(`count-${key}`).textContent({ timeout: 5_000 }));
}
