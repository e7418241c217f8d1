import { expect } from 'vitest';
import { startProsody } from '../support/prosody';
import { waitUntil } from '../support/wait';
import { XmppUser } from '../support/xmpp-user';
import { editPlatform } from './open-form';
import type { WindowPlatform, WindowPlatformRow } from './row';

/**
 * XMPP on a real prosody: the card and form (the password kept by one Save, a
 * refused login in words, Test connection logging in and out), and an
 * answered message once connected.
 */
async function start(): Promise<WindowPlatform> {
  const prosody = await startProsody({ users: { homing: 'homing-window-pw', alice: 'alice-pw' } });
  const users: XmppUser[] = [];
  return {
    config: { platforms: { xmpp: { jid: 'homing@localhost', host: '127.0.0.1', port: prosody.port, security: 'none', allowFrom: ['alice@localhost'] } } },
    async dispose() {
      for (const user of users) await user.stop();
      await prosody.dispose();
    },
    async exercise({ page, api }) {
      const card = page.getByTestId('platform-xmpp');

      // No password yet: the card says why it is not connected.
      await card.getByText(/password for homing@localhost is not set/).waitFor();
      const form = await editPlatform(page, 'xmpp', 'XMPP');
      expect(await form.getByLabel('Account (JID)').inputValue()).toBe('homing@localhost');

      await form.getByLabel(/^Password/).fill('not-the-password');
      await form.getByRole('button', { name: 'Save XMPP' }).click();
      await page.getByTestId('xmpp-form-message').getByText(/^Saved\. Password is in the secret store\./).waitFor({ timeout: 20_000 });
      await card.getByText(/refused the login/).waitFor({ timeout: 20_000 });
      await form.getByRole('button', { name: 'Test connection' }).click();
      await page.getByTestId('xmpp-form-message').getByText(/refused the login for homing@localhost \(not-authorized\)/).waitFor({ timeout: 20_000 });

      // Typed over the stored one, the right password replaces it at Save.
      await form.getByLabel(/^Password/).fill('homing-window-pw');
      await form.getByRole('button', { name: 'Save XMPP' }).click();
      await page.getByTestId('xmpp-form-message').getByText(/^Saved\. Password is in the secret store\./).waitFor({ timeout: 20_000 });
      expect(JSON.stringify(await api.call('getConfig'))).not.toContain('homing-window-pw');
      await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 20_000 });
      await form.getByRole('button', { name: 'Test connection' }).click();
      await page
        .getByTestId('xmpp-form-message')
        .getByText(new RegExp(`^logged in as homing@localhost on 127\\.0\\.0\\.1:${prosody.port} \\(not encrypted; stream management on\\) and out again`))
        .waitFor({ timeout: 20_000 });

      // And it answers.
      const alice = new XmppUser('alice', 'alice-pw', prosody.port);
      users.push(alice);
      await alice.start();
      await alice.say('homing@localhost', 'hello from the window test');
      await waitUntil('the answer', () => alice.bodiesFrom('homing@localhost').some((message) => message.body === 'You said: hello from the window test'), 20_000);
    },
  };
}

export const xmppWindow: WindowPlatformRow = {
  title: 'XMPP (a real prosody)',
  promise: 'keeps the password with one Save, says a wrong one was refused, connects with the right one, and tests the login',
  timeoutMs: 90_000,
  start,
};
