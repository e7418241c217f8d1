/// <reference lib="dom" />
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { DeliveryPage, DeliveryRow, PairingOverview } from '../src/shared/api';
import { connectApi, type ApiSocket } from './support/api-socket';
import { launchChromium } from './support/browser';
import { FakeTelegram, type FakeUser } from './support/fake-telegram';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { waitUntil } from './support/wait';
import { screenshot } from './window-fixtures/window-page';

/**
 * Issue 36: the headless window's desktop notifications, in Debian's Chromium
 * against a real `homing gateway` on the fake Bot API. A reply to someone who
 * blocked the bot is refused for good ("needs you"); a stranger's message is a
 * pairing request. `window.Notification` is wrapped (addInitScript) so the test
 * sees each notification the page creates, and each permission request.
 */

const AGENT = fileURLToPath(new URL('./chaos/chaos-agent.mjs', import.meta.url));

let browser: Browser;
let fake: FakeTelegram;
let dataDir: string;
let gateway: RunningGateway;
let api: ApiSocket;
/** Allowed to write to the bot (not strangers: their messages are pairing requests). */
const friends: FakeUser[] = [];
let nextId = 7_300_000_001;
let nextRequest = 1;

function person(name: string, allowed: boolean): FakeUser {
  const user = fake.addUser({ id: nextId++, first_name: name });
  if (allowed) friends.push(user);
  return user;
}

beforeAll(async () => {
  browser = await launchChromium();
  fake = new FakeTelegram();
  await fake.start();
  // Who may write is fixed at start: the friends of every test are made here.
  for (const width of [360, 1280]) for (const name of ['Ann', 'Ben', 'Dora']) person(`${name} ${width}`, true);
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-notify-'));
  writeFileSync(
    join(dataDir, 'config.json'),
    JSON.stringify({
      agent: { type: 'command', command: process.execPath, args: [AGENT, '--max-delay-ms', '0'] },
      platforms: { telegram: { apiRoot: fake.apiRoot, tokenEnv: 'TELEGRAM_TOKEN', allowFrom: friends.map((user) => String(user.id)), pollTimeoutSeconds: 5 } },
    }),
  );
  gateway = await startHeadlessGateway(['--data-dir', dataDir], { TELEGRAM_TOKEN: fake.token });
  api = await connectApi(gateway);
  await waitUntil('the bot polling', () => fake.polling, 15_000);
  // Everyone has a conversation before the windows open.
  for (const user of friends) await says(user);
}, 60_000);
afterAll(async () => {
  api?.close();
  await gateway?.stop();
  await fake?.stop();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `user` writes to the bot; resolves with the reply's delivery row once it is delivered or refused for good. */
async function says(user: FakeUser): Promise<DeliveryRow> {
  const request = `req-${String(nextRequest++).padStart(4, '0')}`;
  fake.userSays({ from: user, text: request });
  let row: DeliveryRow | undefined;
  await waitUntil(
    `the reply to ${request}`,
    async () => {
      const settled = async (state: 'delivered' | 'failed') => (await api.call<DeliveryPage>('listDeliveries', { state })).deliveries;
      row = [...(await settled('delivered')), ...(await settled('failed'))].find(
        (candidate) => candidate.preview.startsWith(request) && (candidate.state === 'delivered' || candidate.nextAttemptAt === null),
      );
      return row !== undefined;
    },
    20_000,
  );
  return row!;
}

interface Created {
  readonly title: string;
  readonly body: string;
}

type Spied = Window & { notified: Created[]; notifications: Notification[]; asked: number };

/** A page whose notifications the test sees; `grant`: the browser's answer when asked (Playwright grants or refuses the permission). */
async function openSpiedWindow(width: number, grant: boolean): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 800 }, permissions: grant ? ['notifications'] : [] });
  await context.addInitScript(() => {
    const spied = window as unknown as Spied;
    const Real = window.Notification;
    spied.notified = [];
    spied.notifications = [];
    spied.asked = 0;
    class Spy extends Real {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        spied.notified.push({ title, body: options?.body ?? '' });
        spied.notifications.push(this);
      }
      static override requestPermission(...args: Parameters<typeof Notification.requestPermission>) {
        spied.asked++;
        return Real.requestPermission(...args);
      }
    }
    window.Notification = Spy;
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(gateway.url);
  await page.getByTestId('summary').waitFor();
  await page.getByTestId('conversation').first().waitFor();
  return { context, page, errors };
}

const notified = (page: Page) => page.evaluate(() => (window as unknown as Spied).notified);
const asked = (page: Page) => page.evaluate(() => (window as unknown as Spied).asked);
const conversation = (page: Page, title: string) => page.getByTestId('conversation').filter({ has: page.locator('.conversation-title', { hasText: title }) });

describe('desktop notifications in the headless window', () => {
  for (const width of [360, 1280]) {
    it(`asks only at "Turn on notifications", then tells of a reply that needs you — not one in the conversation on screen (${width} px)`, async () => {
      const [ann, ben] = friends.filter((user) => user.first_name.endsWith(` ${width}`));
      const { context, page, errors } = await openSpiedWindow(width, true);
      // Nothing asked before the reader's click.
      expect(await asked(page)).toBe(0);
      const toggle = page.getByTestId('notifications-toggle');
      expect(await toggle.textContent()).toMatch(/Turn on notifications|Notify me/);
      expect(await page.getByRole('button', { name: 'Turn on notifications' }).count()).toBe(1);
      await toggle.click();
      await page.getByRole('button', { name: 'Turn off notifications' }).waitFor();
      expect(await asked(page)).toBe(1);
      await screenshot(page, `notifications-on-light-${width}`);

      // Ann's conversation is on screen: her refused reply shows right there, and no notification.
      await conversation(page, ann!.first_name).click();
      await page.locator('#transcript-title').getByText(ann!.first_name).waitFor();
      fake.block(ann!.id);
      const refused = await says(ann!);
      expect(refused.nextAttemptAt).toBeNull();
      await page.locator('[data-testid="delivery-tick"][data-kind="needs-you"]').waitFor({ timeout: 15_000 });
      // The tick and a notification come from the same event: had there been one, it would be here by now.
      expect(await notified(page)).toEqual([]);
      // Ben's is not: his refused reply is a notification, in the window's words.
      fake.block(ben!.id);
      await says(ben!);
      await expect.poll(() => notified(page), { timeout: 15_000 }).toHaveLength(1);
      const [shown] = await notified(page);
      expect(shown!.title).toBe('Needs you: a reply on Telegram was refused for good');
      expect(shown!.body).toMatch(/^Telegram refused it for good: /);

      // A click on it opens Ben's conversation, where Retry and Discard are.
      await page.evaluate(() => (window as unknown as Spied).notifications[0]!.onclick?.(new Event('click')));
      await page.locator('#transcript-title').getByText(ben!.first_name).waitFor();
      await page.getByTestId('reply-retry').first().waitFor();
      expect(await notified(page)).toHaveLength(1);
      expect(errors).toEqual([]);
      await context.close();
    }, 60_000);
  }

  it('tells of a new pairing request, and remembers that notifications are on across a reload (1280 px)', async () => {
    const { context, page, errors } = await openSpiedWindow(1280, true);
    await page.getByRole('button', { name: 'Turn on notifications' }).click();
    await page.getByRole('button', { name: 'Turn off notifications' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Turn off notifications' }).waitFor();
    // The request list is read once notifications are on: a request from now on is new.
    await page.getByTestId('conversation').first().waitFor();

    const stranger = person('Erin', false);
    fake.userSays({ from: stranger, text: 'hello?' });
    await waitUntil('the pairing request', async () => (await api.call<PairingOverview>('listPairing')).requests.some((request) => request.name?.startsWith('Erin')), 15_000);
    await expect.poll(() => notified(page), { timeout: 15_000 }).toEqual([{ title: 'Erin asked to talk to your agent', body: 'On Telegram: approve or deny under Platforms.' }]);
    // A click leads to Platforms, where the request is answered.
    await page.evaluate(() => (window as unknown as Spied).notifications[0]!.onclick?.(new Event('click')));
    await expect.poll(() => page.locator('nav button[data-view="platforms"]').getAttribute('aria-current')).toBe('page');

    // Turned off: nothing more, and the choice is remembered.
    await page.getByRole('button', { name: 'Turn off notifications' }).click();
    await page.getByRole('button', { name: 'Turn on notifications' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Turn on notifications' }).waitFor();
    expect(await asked(page)).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  for (const width of [360, 1280]) {
    it(`shows no control and notifies of nothing where the browser refused notifications (${width} px)`, async () => {
      const dora = friends.find((user) => user.first_name === `Dora ${width}`)!;
      const { context, page, errors } = await openSpiedWindow(width, false);
      expect(await page.evaluate(() => Notification.permission)).toBe('denied');
      expect(await page.getByTestId('notifications-toggle').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Keyboard shortcuts' }).isVisible()).toBe(true);
      fake.block(dora.id);
      await says(dora);
      // The refused reply reached the window, and still nothing was created or asked.
      await conversation(page, dora.first_name).click();
      await page.locator('[data-testid="delivery-tick"][data-kind="needs-you"]').waitFor({ timeout: 15_000 });
      expect(await notified(page)).toEqual([]);
      expect(await asked(page)).toBe(0);
      expect(errors).toEqual([]);
      await context.close();
    }, 60_000);
  }
});
