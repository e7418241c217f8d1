import { expect } from 'vitest';
import { FakeSlack } from '../support/fake-slack';
import { waitUntil } from '../support/wait';
import { editPlatform } from './open-form';
import type { WindowPlatform, WindowPlatformRow } from './row';

/**
 * Slack on the fake Slack: the card and form (both tokens typed, one Save keeps
 * them in the secret store, Test connection naming the bot and the workspace),
 * and a DM pairing request approved under the card, the person's member id
 * never shown.
 */
async function start(): Promise<WindowPlatform> {
  const fake = new FakeSlack();
  await fake.start();
  const carol = fake.addUser('carol');
  return {
    config: { platforms: { slack: { apiUrl: fake.apiUrl } } },
    dispose: () => fake.dispose(),
    async exercise({ page, api }) {
      const card = page.getByTestId('platform-slack');
      await card.getByText(/app-level token is not set/).waitFor();
      const form = await editPlatform(page, 'slack', 'Slack');
      await form.getByLabel(/^App-level token/).fill(fake.appToken);
      await form.getByLabel(/^Bot token/).fill(fake.botToken);
      await form.getByRole('button', { name: 'Save Slack' }).click();
      await page.getByTestId('slack-form-message').getByText(/^Saved\./).waitFor({ timeout: 20_000 });
      const config = JSON.stringify(await api.call('getConfig'));
      expect(config).not.toContain(fake.appToken);
      expect(config).not.toContain(fake.botToken);
      await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 20_000 });
      expect(await page.getByTestId('slack-requests').count()).toBe(0);
      await form.getByRole('button', { name: 'Test connection' }).click();
      const message = page.getByTestId('slack-form-message');
      await message.getByText(/^connected to Slack as homing in the workspace Homing Test/).waitFor();

      const dm = fake.dmWith(carol);
      fake.userSays({ from: carol, channelId: dm.id, text: 'hello' });
      const requests = page.getByTestId('slack-requests').getByTestId('pairing-request');
      await waitUntil('the request in the window', async () => (await requests.count()) === 1, 20_000);
      expect(await page.getByTestId('slack-requests').textContent()).not.toContain(carol.id);
      await requests.getByRole('button', { name: 'Approve' }).click();
      await waitUntil('no requests left', async () => (await requests.count()) === 0, 10_000);
      fake.userSays({ from: carol, channelId: dm.id, text: 'am I in?' });
      await waitUntil('the answer', () => fake.messages(dm.id).some((m) => m.user === fake.bot.id && m.text === 'You said: am I in?'), 20_000);

      // A second stranger, denied: the request goes, and the agent never answers them.
      const dave = fake.addUser('dave');
      const daveDm = fake.dmWith(dave);
      fake.userSays({ from: dave, channelId: daveDm.id, text: 'let me in' });
      await waitUntil('the second request in the window', async () => (await requests.count()) === 1, 20_000);
      await requests.getByRole('button', { name: 'Deny' }).click();
      await waitUntil('no requests left', async () => (await requests.count()) === 0, 10_000);
      fake.userSays({ from: dave, channelId: daveDm.id, text: 'please?' });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(fake.messages(daveDm.id).filter((m) => m.user === fake.bot.id && m.text.startsWith('You said'))).toEqual([]);
    },
  };
}

export const slackWindow: WindowPlatformRow = {
  title: 'Slack (the fake Slack)',
  promise: 'keeps both tokens with one Save, tests them (auth.test names the bot and the workspace), and approves and denies pairing requests',
  timeoutMs: 90_000,
  start,
};
