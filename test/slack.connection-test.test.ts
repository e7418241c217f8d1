import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { slackPlatformSchema } from '../src/main/gateway/platforms/slack/config-schema';
import { silentLogger } from '../src/main/gateway/logger';
import { testConnection } from '../src/main/gateway/platforms/connection-test';
import { FileSecretStore } from '../src/main/gateway/secrets/secret-store';
import { FakeSlack } from './support/fake-slack';

/** Test connection for Slack against the fake: auth.test and apps.connections.open with the saved tokens, and where the tokens may go. */
describe('Test connection for Slack', () => {
  let fake: FakeSlack;
  let dir: string;

  beforeEach(async () => {
    fake = new FakeSlack();
    await fake.start();
    dir = mkdtempSync(join(tmpdir(), 'homing-slack-test-'));
  });

  afterEach(async () => {
    await fake.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const deps = (tokens: { app?: string; bot?: string }, savedUrl = fake.apiUrl) => {
    const secrets = new FileSecretStore(dir, silentLogger);
    if (tokens.app !== undefined) secrets.set('slack.appToken', tokens.app);
    if (tokens.bot !== undefined) secrets.set('slack.botToken', tokens.bot);
    return { secrets, env: {}, timeoutMs: 5_000, savedConfig: { platforms: { slack: slackPlatformSchema.parse({ apiUrl: savedUrl }) } } };
  };

  it('names the bot and the workspace, and checks that Socket Mode opens', async () => {
    const result = await testConnection('slack', { apiUrl: fake.apiUrl }, deps({ app: fake.appToken, bot: fake.botToken }));
    expect(result).toMatchObject({ ok: true, message: expect.stringContaining('connected to Slack as homing in the workspace Homing Test') });
    expect(fake.calls.map((call) => call.method)).toEqual(['auth.test', 'apps.connections.open']);
    // The URL it was given is never connected to.
    expect(fake.connectionsOpened).toBe(0);
  });

  it('says which token was refused, and never shows either', async () => {
    const bot = await testConnection('slack', { apiUrl: fake.apiUrl }, deps({ app: fake.appToken, bot: 'xoxb-wrong-value' }));
    expect(bot).toMatchObject({ ok: false, message: expect.stringContaining('Slack refused the bot token') });
    expect(bot.message).not.toContain('xoxb-wrong-value');
    const app = await testConnection('slack', { apiUrl: fake.apiUrl }, deps({ app: 'xapp-wrong-value', bot: fake.botToken }));
    expect(app).toMatchObject({ ok: false, message: expect.stringContaining('the app-level token does not open Socket Mode (invalid_auth)') });
    expect(app.message).not.toContain('xapp-wrong-value');
    // The two tokens swapped: the app-level one is not a bot token.
    const swapped = await testConnection('slack', { apiUrl: fake.apiUrl }, deps({ app: fake.botToken, bot: fake.appToken }));
    expect(swapped).toMatchObject({ ok: false, message: expect.stringContaining('not_allowed_token_type') });
  });

  it('sends the saved tokens only to the address they were saved for, and says when one is missing', async () => {
    const none = await testConnection('slack', { apiUrl: fake.apiUrl }, deps({ app: fake.appToken }));
    expect(none).toMatchObject({ ok: false, message: expect.stringContaining('no bot token is saved yet') });
    const elsewhere = await testConnection('slack', { apiUrl: fake.apiUrl }, deps({ app: fake.appToken, bot: fake.botToken }, 'https://slack.com/api/'));
    expect(elsewhere).toMatchObject({ ok: false, message: expect.stringContaining('were not sent') });
    expect(fake.calls).toEqual([]);
  });

  it('says in words when nothing answers', async () => {
    const port = Number(new URL(fake.apiUrl).port);
    await fake.stop();
    const result = await testConnection('slack', { apiUrl: `http://127.0.0.1:${port}/api/` }, deps({ app: fake.appToken, bot: fake.botToken }, `http://127.0.0.1:${port}/api/`));
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/could not be reached|no answer/);
  });
});
