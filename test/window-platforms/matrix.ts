import { expect } from 'vitest';
import { FakeMatrix } from '../support/fake-matrix';
import { waitUntil } from '../support/wait';
import { addPlatform } from './open-form';
import type { WindowPlatform, WindowPlatformRow } from './row';

/**
 * Matrix on the fake homeserver, added from "Add a platform": the form
 * (homeserver, user, the token, one Save; Test connection = whoami) and the card listing the bot's rooms
 * by name, an encrypted one marked as not supported yet, and a stranger's
 * pairing request approved under Matrix → requests.
 */
async function start(): Promise<WindowPlatform> {
  const fake = new FakeMatrix();
  await fake.start();
  const bot = fake.addUser('homing', { displayName: 'Homing' });
  const alice = fake.addUser('alice', { displayName: 'Alice' });
  const token = fake.issueToken(bot, 'WINDOWDEV');
  fake.createRoom(alice, { name: 'Family', invite: [bot] });
  fake.createRoom(alice, { name: 'Secret plans', invite: [bot], encrypted: true });
  return {
    // Nothing of Matrix in the config: the window sets it all.
    config: {},
    dispose: () => fake.stop(),
    async exercise({ page, api }) {
      // Not on the list yet: added from the chooser, its form shows nothing as connected.
      expect(await page.getByTestId('platform-matrix').count()).toBe(0);
      const form = await addPlatform(page, 'matrix', 'Matrix');
      const card = page.getByTestId('platform-matrix');
      expect(await card.getByTestId('platform-state').textContent()).toBe('not added yet');
      expect(await form.getByLabel('Connect to Matrix').count()).toBe(0);
      await form.getByLabel('Homeserver URL').fill(fake.baseUrl);
      await form.getByLabel('Bot user').fill(bot);
      await form.getByLabel('Always allowed (Matrix user ids)').fill(alice);
      await form.getByLabel(/^Access token/).fill(token);
      await form.getByRole('button', { name: 'Save Matrix' }).click();
      await page.getByTestId('matrix-form-message').getByText(/^Saved\. Access token is in the secret store\./).waitFor({ timeout: 20_000 });
      expect(JSON.stringify(await api.call('getConfig'))).not.toContain(token);

      await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 15_000 });
      // Added, it is a platform like the others: its box now says it connects.
      await form.getByLabel('Connect to Matrix').waitFor();
      expect(await form.getByLabel('Connect to Matrix').isChecked()).toBe(true);
      await form.getByRole('button', { name: 'Test connection' }).click();
      await page.getByTestId('matrix-form-message').getByText(`connected to ${fake.baseUrl} as ${bot} (device WINDOWDEV)`).waitFor();

      // Invited by an allowed user: the bot joins both rooms, and the card names them.
      const rooms = card.getByTestId('platform-rooms');
      await rooms.getByText('Family').waitFor({ timeout: 15_000 });
      await rooms.getByText('Secret plans').waitFor({ timeout: 15_000 });
      const secret = rooms.locator('li', { hasText: 'Secret plans' });
      await secret.getByText('encrypted — not supported yet').waitFor();
      expect(await rooms.locator('li', { hasText: 'Family' }).textContent()).not.toContain('encrypted');
      await waitUntil('the encrypted room told', () => fake.posted.some((message) => message.sender === bot), 10_000);

      // A stranger's direct chat: a pairing code, a request under the Matrix card, approved there.
      expect(await page.getByTestId('matrix-requests').count()).toBe(0);
      const bob = fake.addUser('bob', { displayName: 'Bob' });
      const dm = fake.createRoom(bob, { invite: [bot], direct: true });
      await waitUntil('the bot in the direct chat', () => fake.membership(bot, dm) === 'join', 15_000);
      fake.userSays(bob, dm, 'hello?');
      const requests = page.getByTestId('matrix-requests').getByTestId('pairing-request');
      await requests.filter({ hasText: 'Bob' }).getByRole('button', { name: 'Approve' }).click({ timeout: 15_000 });
      await page.getByTestId('matrix-requests').getByTestId('pairing-approved').getByText(/Bob/).waitFor();
      expect(await page.getByTestId('telegram-requests').getByTestId('pairing-request').count()).toBe(0);
      fake.userSays(bob, dm, 'now?');
      await waitUntil('Bob answered', () => fake.postedBy(bot, dm).some((message) => message.body === 'You said: now?'), 15_000);
    },
  };
}

export const matrixWindow: WindowPlatformRow = {
  title: 'Matrix (the fake homeserver)',
  promise: 'adds the account and its token with one Save, tests it (whoami), and lists the rooms with names and encryption',
  timeoutMs: 60_000,
  start,
};
