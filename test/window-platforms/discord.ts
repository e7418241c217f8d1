import { expect } from 'vitest';
import { FakeDiscord } from '../support/fake-discord';
import { waitUntil } from '../support/wait';
import { editPlatform } from './open-form';
import type { WindowPlatform, WindowPlatformRow } from './row';

/**
 * Discord on the fake Discord: the card and form (the token typed, one Save
 * keeps it in the secret store, Test connection naming the bot with its invite
 * link and the intent to switch on), and a DM pairing request approved under
 * the card.
 */
async function start(): Promise<WindowPlatform> {
  const fake = new FakeDiscord();
  await fake.start();
  const carol = fake.addUser('carol');
  return {
    config: { platforms: { discord: { apiUrl: fake.apiUrl } } },
    dispose: () => fake.stop(),
    async exercise({ page, api }) {
      const card = page.getByTestId('platform-discord');
      await card.getByText(/bot token is not set/).waitFor();
      const form = await editPlatform(page, 'discord', 'Discord');
      await form.getByLabel(/^Discord bot token/).fill(fake.token);
      await form.getByRole('button', { name: 'Save Discord' }).click();
      await page.getByTestId('discord-form-message').getByText(/^Saved\. Discord bot token is in the secret store\./).waitFor({ timeout: 20_000 });
      expect(JSON.stringify(await api.call('getConfig'))).not.toContain(fake.token);
      await card.getByTestId('platform-secrets').getByText('Discord bot token: set').waitFor();
      await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 20_000 });
      expect(await page.getByTestId('discord-requests').count()).toBe(0);
      await form.getByRole('button', { name: 'Test connection' }).click();
      const message = page.getByTestId('discord-form-message');
      await message.getByText(/^connected to Discord as Homing Test/).waitFor();
      expect(await message.textContent()).toContain(`https://discord.com/oauth2/authorize?client_id=${fake.bot.id}&scope=bot&permissions=`);
      expect(await message.textContent()).toContain('Message Content Intent');

      const dm = fake.dmChannel(carol);
      fake.userSays({ from: carol, channelId: dm.id, content: 'hello' });
      const requests = page.getByTestId('discord-requests').getByTestId('pairing-request');
      await waitUntil('the request in the window', async () => (await requests.count()) === 1, 20_000);
      expect(await page.getByTestId('discord-requests').textContent()).not.toContain(carol.id);
      await requests.getByRole('button', { name: 'Approve' }).click();
      await waitUntil('no requests left', async () => (await requests.count()) === 0, 10_000);
      fake.userSays({ from: carol, channelId: dm.id, content: 'am I in?' });
      await waitUntil('the answer', () => fake.messages(dm.id).some((m) => m.author.id === fake.bot.id && m.content === 'You said: am I in?'), 20_000);
    },
  };
}

export const discordWindow: WindowPlatformRow = {
  title: 'Discord (the fake Discord)',
  promise: 'keeps the token with one Save, tests it (GET /users/@me names the bot, with the invite link), and approves a pairing request',
  timeoutMs: 90_000,
  start,
};
