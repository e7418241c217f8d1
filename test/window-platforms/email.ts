import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { EmailWorld } from '../support/email-world';
import { editPlatform } from './open-form';
import type { WindowPlatform, WindowPlatformRow } from './row';

const AGENT = { address: 'agent@test.local', password: 'agentpw' };

/**
 * Email on a real dovecot and the SMTP sink: the card and form (the password
 * kept by one Save, Test connection logging in to IMAP and SMTP).
 */
async function start(): Promise<WindowPlatform> {
  const world = await EmailWorld.start([AGENT]);
  return {
    // No password variable: the window stores the password.
    config: { platforms: world.platformsConfig(AGENT.address, { passwordEnv: undefined, allowFrom: ['alice@example.org'] }), delivery: { leaseSeconds: 2 } },
    dispose: () => world.dispose(),
    async exercise({ page, api, dataDir }) {
      const card = page.getByTestId('platform-email');
      await card.getByText(/mailbox password is not set/).waitFor({ timeout: 15_000 });
      const form = await editPlatform(page, 'email', 'Email');
      expect(await form.getByLabel('Address', { exact: true }).inputValue()).toBe(AGENT.address);
      const message = page.getByTestId('email-form-message');

      // A wrong password first: Test connection says which login failed.
      await form.getByLabel(/^Mailbox password/).fill('not-the-password');
      await form.getByRole('button', { name: 'Save Email' }).click();
      await message.getByText(/^Saved\. Mailbox password is in the secret store\./).waitFor({ timeout: 20_000 });
      await form.getByRole('button', { name: 'Test connection' }).click();
      await message.getByText(/refused the login/).first().waitFor({ timeout: 20_000 });

      await form.getByLabel(/^Mailbox password/).fill(AGENT.password);
      await form.getByRole('button', { name: 'Save Email' }).click();
      await message.getByText(/^Saved\. Mailbox password is in the secret store\./).waitFor({ timeout: 20_000 });
      expect(JSON.stringify(await api.call('getConfig'))).not.toContain(AGENT.password);
      expect(readFileSync(join(dataDir, 'config.json'), 'utf8')).not.toContain(AGENT.password);
      await card.getByTestId('platform-state').getByText('connected', { exact: true }).waitFor({ timeout: 20_000 });
      await form.getByRole('button', { name: 'Test connection' }).click();
      await message.getByText(/IMAP: logged in to 127\.0\.0\.1:\d+ as agent@test\.local/).waitFor({ timeout: 20_000 });
      expect(await message.textContent()).toMatch(/SMTP: 127\.0\.0\.1:\d+ accepted the login as agent@test\.local/);
    },
  };
}

export const emailWindow: WindowPlatformRow = {
  title: 'email (real dovecot, SMTP sink)',
  promise: 'keeps the password with one Save, connects, and tests IMAP and SMTP logins, naming a wrong password',
  timeoutMs: 90_000,
  start,
};
