import { expect } from 'vitest';
import { FakeSignalCli } from '../support/fake-signal-cli';
import { waitUntil } from '../support/wait';
import { addPlatform } from './open-form';
import type { WindowPlatform, WindowPlatformRow } from './row';

/**
 * Signal on the fake signal-cli daemon: Add a platform → Signal, the daemon's
 * address and the number typed, one Save, the card connected, Test connection
 * naming signal-cli's version and the registered account, and a stranger's
 * pairing request (their number and UUID kept out of the window) approved.
 */
async function start(): Promise<WindowPlatform> {
  const fake = await new FakeSignalCli().start();
  const carol = fake.addPerson('carol');
  const mallory = fake.addPerson('mallory');
  return {
    config: { platforms: {} },
    dispose: () => fake.stop(),
    async exercise({ page, api }) {
      const form = await addPlatform(page, 'signal', 'Signal');
      await form.getByLabel(/^signal-cli daemon/).fill(fake.address);
      await form.getByLabel(/^Signal number signal-cli is linked to/).fill(fake.account.number);
      await form.getByRole('button', { name: 'Save Signal' }).click();
      await page.getByTestId('signal-form-message').getByText(/^Saved/).waitFor({ timeout: 20_000 });
      const view = (await api.call('getConfig')) as { written: { platforms: { signal?: { daemon?: string; account?: string } } } };
      expect(view.written.platforms.signal).toMatchObject({ daemon: fake.address, account: fake.account.number });
      const card = page.getByTestId('platform-signal');
      await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 20_000 });
      await form.getByRole('button', { name: 'Test connection' }).click();
      const message = page.getByTestId('signal-form-message');
      await message.getByText(/^connected to signal-cli 0\.13\.22 at 127\.0\.0\.1:\d+; the account is registered on Signal/).waitFor({ timeout: 20_000 });

      // Two strangers write; each gets a code; one is approved, the other denied.
      fake.userSays({ from: carol, text: 'hello' });
      fake.userSays({ from: mallory, text: 'let me in' });
      const requests = page.getByTestId('signal-requests').getByTestId('pairing-request');
      await waitUntil('two requests in the window', async () => (await requests.count()) === 2, 20_000);
      const shown = (await page.getByTestId('signal-requests').textContent()) ?? '';
      for (const person of [carol, mallory]) {
        expect(shown).not.toContain(person.number);
        expect(shown).not.toContain(person.uuid);
      }
      const codeOf = (person: typeof carol) => /pairing code: (\S+)/i.exec(fake.sentTo(person).map((sent) => sent.message).join('\n'))?.[1];
      await waitUntil('both told their code', () => codeOf(carol) !== undefined && codeOf(mallory) !== undefined, 10_000);
      await requests.filter({ hasText: codeOf(carol)! }).getByRole('button', { name: 'Approve' }).click();
      await requests.filter({ hasText: codeOf(mallory)! }).getByRole('button', { name: 'Deny' }).click();
      await waitUntil('no requests left', async () => (await requests.count()) === 0, 10_000);
      fake.userSays({ from: carol, text: 'am I in?' });
      fake.userSays({ from: mallory, text: 'and me?' });
      await waitUntil('the answer', () => fake.sentTo(carol).some((sent) => sent.message === 'You said: am I in?'), 20_000);
      // Mallory was told a code once and nothing since; nothing of theirs reached the agent.
      expect(fake.sentTo(mallory).map((sent) => sent.message)).toEqual([expect.stringMatching(/pairing code/i)]);
      const sessions = (await api.call('listSessions', {})) as { sessions: { platform: string }[] };
      expect(sessions.sessions.filter((session) => session.platform === 'signal')).toHaveLength(1);
    },
  };
}

export const signalWindow: WindowPlatformRow = {
  title: 'Signal (the fake signal-cli daemon)',
  promise: 'adds Signal with the daemon’s address and the number, connects, tests the daemon and the account, approves one pairing request and denies another',
  timeoutMs: 90_000,
  start,
};
