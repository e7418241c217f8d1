import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProsody, type RunningProsody } from '../../../../test/support/prosody';
import { homingConfigSchema } from '../homing-config';
import { silentLogger } from '../logger';
import { FileSecretStore } from '../secrets/secret-store';
import { testConnection } from './connection-test';

/**
 * Test connection for XMPP against a real prosody: it logs in and out with the
 * settings under test; the saved password goes only to the account and server
 * it was saved for, and never in plain text when it was saved for encryption.
 */

let prosody: RunningProsody;
let dir: string;
beforeAll(async () => {
  prosody = await startProsody({ users: { homing: 'right-pw' } });
  dir = mkdtempSync(join(tmpdir(), 'homing-xmpp-test-connection-'));
}, 60_000);
afterAll(async () => {
  await prosody?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function secrets(password: string): FileSecretStore {
  const store = new FileSecretStore(mkdtempSync(join(dir, 's-')), silentLogger);
  store.set('xmpp.password', password);
  return store;
}

const section = (extra: Record<string, unknown> = {}) => ({ jid: 'homing@localhost', host: '127.0.0.1', port: prosody.port, security: 'none', ...extra });
const saved = (extra: Record<string, unknown> = {}) => homingConfigSchema.parse({ platforms: { xmpp: section(extra) } });

describe('Test connection for XMPP', () => {
  it('logs in and out with the saved password, naming stream management', async () => {
    const result = await testConnection('xmpp', section(), { secrets: secrets('right-pw'), env: {}, savedConfig: saved() });
    expect(result).toEqual({ ok: true, message: `logged in as homing@localhost on 127.0.0.1:${prosody.port} (not encrypted; stream management on) and out again` });
  });

  it('says a wrong password was refused, in words', async () => {
    const result = await testConnection('xmpp', section(), { secrets: secrets('wrong-pw'), env: {}, savedConfig: saved() });
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/refused the login for homing@localhost \(not-authorized\): check the JID and the password/);
  });

  it('does not send the saved password to another account, or in plain text when it was saved for encryption', async () => {
    const other = await testConnection('xmpp', section({ jid: 'someone@localhost' }), { secrets: secrets('right-pw'), env: {}, savedConfig: saved() });
    expect(other).toMatchObject({ ok: false, message: expect.stringMatching(/no password is saved for someone@localhost.*the saved password was not sent: it was saved for homing@localhost/) });
    const plain = await testConnection('xmpp', section(), { secrets: secrets('right-pw'), env: {}, savedConfig: saved({ security: 'starttls' }) });
    expect(plain).toMatchObject({ ok: false, message: expect.stringMatching(/the saved password was not sent: .* with encryption/) });
  });

  it('refuses a server without STARTTLS when encryption is required, before sending the password', async () => {
    const logins = () => prosody.output().split('\n').filter((line) => /Authenticated as homing@localhost/.test(line)).length;
    const before = logins();
    const result = await testConnection('xmpp', section({ security: 'starttls' }), { secrets: secrets('right-pw'), env: {}, savedConfig: saved({ security: 'starttls' }) });
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/does not offer STARTTLS, so the connection would not be encrypted; the password was not sent/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(logins()).toBe(before);
  });

  it('names the field of an invalid section', async () => {
    const result = await testConnection('xmpp', { jid: 'not a jid' }, { secrets: secrets('x'), env: {} });
    expect(result).toEqual({ ok: false, message: expect.stringMatching(/^platforms\.xmpp\.jid: must be a bare JID/) });
  });
});
