import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discordPlatformSchema } from '../src/main/gateway/platforms/discord/config-schema';
import { silentLogger } from '../src/main/gateway/logger';
import { testConnection } from '../src/main/gateway/platforms/connection-test';
import { FileSecretStore } from '../src/main/gateway/secrets/secret-store';
import { FakeDiscord } from './support/fake-discord';

/** Test connection for Discord against the fake: GET /users/@me with the saved token, and where the token may go. */
describe('Test connection for Discord', () => {
  let fake: FakeDiscord;
  let dir: string;

  beforeEach(async () => {
    fake = new FakeDiscord();
    await fake.start();
    dir = mkdtempSync(join(tmpdir(), 'homing-dc-test-'));
  });

  afterEach(async () => {
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const deps = (token: string | undefined, savedUrl = fake.apiUrl) => {
    const secrets = new FileSecretStore(dir, silentLogger);
    if (token !== undefined) secrets.set('discord.token', token);
    return { secrets, env: {}, timeoutMs: 5_000, savedConfig: { platforms: { discord: discordPlatformSchema.parse({ apiUrl: savedUrl }) } } };
  };

  it('names the bot, with its invite link and the intent to switch on', async () => {
    const result = await testConnection('discord', { apiUrl: fake.apiUrl }, deps(fake.token));
    expect(result.ok).toBe(true);
    expect(result.message).toContain(`connected to Discord as Homing Test (id ${fake.bot.id})`);
    expect(result.message).toContain(`client_id=${fake.bot.id}&scope=bot&permissions=274877975552`);
    expect(result.message).toContain('Message Content Intent');
  });

  it('says a wrong token was refused, and never shows it', async () => {
    const result = await testConnection('discord', { apiUrl: fake.apiUrl }, deps('wrong-token-value'));
    expect(result).toMatchObject({ ok: false, message: expect.stringContaining('Discord refused the bot token') });
    expect(result.message).not.toContain('wrong-token-value');
  });

  it('sends the saved token only to the address it was saved for, and says when none is saved', async () => {
    const none = await testConnection('discord', { apiUrl: fake.apiUrl }, deps(undefined));
    expect(none).toMatchObject({ ok: false, message: expect.stringContaining('no bot token is saved yet') });
    const elsewhere = await testConnection('discord', { apiUrl: fake.apiUrl }, deps(fake.token, 'https://discord.com/api'));
    expect(elsewhere).toMatchObject({ ok: false, message: expect.stringContaining('was not sent') });
    expect(fake.requests).toEqual([]);
  });
});
