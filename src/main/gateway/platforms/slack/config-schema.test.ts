import { describe, expect, it } from 'vitest';
import { slackPlatformSchema } from './config-schema';

describe('config.json’s slack section', () => {
  it('takes member and channel ids, with Slack’s API and pairing by default', () => {
    const section = slackPlatformSchema.parse({ allowFrom: ['U0123ABCDE'], channels: { C0123ABCDE: { requireMention: false } }, appTokenEnv: 'SLACK_APP_TOKEN' });
    expect(section).toMatchObject({ enabled: true, apiUrl: 'https://slack.com/api/', dmPolicy: 'pairing', channels: { C0123ABCDE: { requireMention: false, allowFrom: [] } } });
  });

  it('refuses tokens in the file, bad ids, and names the field', () => {
    const token = slackPlatformSchema.safeParse({ botToken: 'xoxb-1' });
    expect(token.success).toBe(false);
    expect(JSON.stringify(token.error?.issues)).toContain('does not belong in config.json');
    const channel = slackPlatformSchema.safeParse({ channels: { general: {} } });
    expect(JSON.stringify(channel.error?.issues)).toContain('is not a Slack channel id');
    expect(slackPlatformSchema.safeParse({ allowFrom: ['alice'] }).success).toBe(false);
    expect(slackPlatformSchema.safeParse({ appTokenEnv: 'not a variable' }).success).toBe(false);
  });

  it('ends the API URL with a slash, as @slack/web-api joins method names to it', () => {
    expect(slackPlatformSchema.parse({ apiUrl: 'http://127.0.0.1:8080/api' }).apiUrl).toBe('http://127.0.0.1:8080/api/');
  });
});
