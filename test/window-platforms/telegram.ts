import { expect } from 'vitest';
import type { SessionPage } from '../../src/shared/api';
import { FakeTelegram } from '../support/fake-telegram';
import { waitUntil } from '../support/wait';
import { editPlatform } from './open-form';
import type { WindowPlatform, WindowPlatformRow } from './row';

/**
 * Telegram on the fake Bot API: the card and form (the token typed, one Save
 * keeps it in the secret store, Test connection naming the bot), and pairing
 * requests, which appear under the card once someone asks, approved and
 * denied there.
 */
async function start(): Promise<WindowPlatform> {
  const fake = new FakeTelegram();
  await fake.start();
  const carol = fake.addUser({ id: 5550001, first_name: 'Carol' });
  const mallory = fake.addUser({ id: 5550002, first_name: 'Mallory' });
  return {
    config: { platforms: { telegram: { apiRoot: fake.apiRoot, pollTimeoutSeconds: 2 } } },
    dispose: () => fake.stop(),
    async exercise({ page, api }) {
      // No token yet: the card says why it is not connected.
      const card = page.getByTestId('platform-telegram');
      await card.getByText(/bot token is not set/).waitFor();
      const form = await editPlatform(page, 'telegram', 'Telegram');
      await form.getByLabel(/^Bot token/).fill(fake.token);
      await form.getByRole('button', { name: 'Save Telegram' }).click();
      await page.getByTestId('telegram-form-message').getByText(/^Saved\. Bot token is in the secret store\./).waitFor({ timeout: 20_000 });
      expect(JSON.stringify(await api.call('getConfig'))).not.toContain(fake.token);
      await card.getByTestId('platform-secrets').getByText('Bot token: set').waitFor();
      await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 15_000 });
      await form.getByRole('button', { name: 'Test connection' }).click();
      await page.getByTestId('telegram-form-message').getByText(/^connected to Telegram as @homing_test_bot \(Homing\)/).waitFor();
      // Nobody asked yet: no requests card.
      expect(await page.getByTestId('telegram-requests').count()).toBe(0);

      // Two strangers write; each gets a code, and both wait in the window by name.
      fake.userSays({ from: carol, text: 'hello' });
      fake.userSays({ from: mallory, text: 'let me in' });
      const requests = page.getByTestId('pairing-request');
      await waitUntil('two requests in the window', async () => (await requests.count()) === 2, 15_000);
      const carolRow = requests.filter({ hasText: 'Carol' });
      await expect.poll(() => carolRow.textContent()).toMatch(/user_[0-9a-f]{12}/);
      expect(await page.getByTestId('telegram-requests').textContent()).not.toContain(String(carol.id));
      await carolRow.getByRole('button', { name: 'Approve' }).click();
      await requests.filter({ hasText: 'Mallory' }).getByRole('button', { name: 'Deny' }).click();
      await waitUntil('no requests left', async () => (await requests.count()) === 0, 10_000);
      await page.getByTestId('pairing-approved').getByText(/Carol/).waitFor();

      // Carol's next message is answered; Mallory's reaches nobody.
      fake.userSays({ from: carol, text: 'am I in?' });
      fake.userSays({ from: mallory, text: 'and me?' });
      await waitUntil('the answer to Carol', () => fake.sentTo(carol.id).some((message) => message.text === 'You said: am I in?'), 15_000);
      await waitUntil('all confirmed', () => fake.pendingUpdates().length === 0);
      expect(fake.sentTo(mallory.id)).toHaveLength(1);
      expect(fake.sentTo(mallory.id)[0]!.text).toMatch(/pairing code/);
      // Nothing of Mallory's reached the agent: the only conversation is Carol's.
      const sessions = await api.call<SessionPage>('listSessions', {});
      expect(sessions.sessions.map((session) => session.title)).toEqual(['Carol']);
    },
  };
}

export const telegramWindow: WindowPlatformRow = {
  title: 'Telegram (the fake Bot API)',
  promise: 'keeps the token with one Save, tests it (getMe names the bot), and approves one pairing request and denies another',
  timeoutMs: 60_000,
  start,
};
