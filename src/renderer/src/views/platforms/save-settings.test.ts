import { describe, expect, it } from 'vitest';
import type { ApiError, ApiResult, HomingApi } from '../../../../shared/api';
import { removePlatform, withoutPlatform } from './remove-platform';
import { saveMessage, saveSettings, type TypedSecret } from './save-settings';

/** The two API methods a Save calls, answering as told and keeping the order of the calls. */
function recordingApi(answers: { config?: ApiError; secret?: ApiError } = {}) {
  const calls: string[] = [];
  const answer = (error: ApiError | undefined): ApiResult<never> => (error ? { ok: false, error } : ({ ok: true, value: {} } as never));
  const api: Pick<HomingApi, 'setConfig' | 'setSecret'> = {
    setConfig: async ({ config }) => (calls.push(`config ${JSON.stringify(config)}`), answer(answers.config)),
    setSecret: async ({ name, value }) => (calls.push(`secret ${name}=${value}`), answer(answers.secret)),
  };
  return { api, calls };
}

const TOKEN: TypedSecret = { name: 'telegram.token', label: 'Bot token', value: '123:abc' };

describe('one Save of a settings form', () => {
  it('writes the config, then stores the secret typed, and says both', async () => {
    const { api, calls } = recordingApi();
    const outcome = await saveSettings(api, { platforms: { telegram: {} } }, [TOKEN]);
    expect(calls).toEqual(['config {"platforms":{"telegram":{}}}', 'secret telegram.token=123:abc']);
    expect(outcome).toEqual({ kind: 'saved', stored: [{ name: 'telegram.token', label: 'Bot token' }] });
    if (outcome.kind !== 'refused') expect(saveMessage(outcome)).toEqual({ text: 'Saved. Bot token is in the secret store. Homing applies it now.', ok: true });
  });

  it('stores nothing when the config is refused: the secret waits in the form', async () => {
    const { api, calls } = recordingApi({ config: { code: 'bad-request', message: 'platforms.matrix.homeserver: must be a URL' } });
    expect((await saveSettings(api, { platforms: {} }, [TOKEN])).kind).toBe('refused');
    expect(calls).toHaveLength(1);
  });

  it('stores a secret alone without touching config.json', async () => {
    const { api, calls } = recordingApi();
    expect((await saveSettings(api, null, [TOKEN])).kind).toBe('saved');
    expect(calls).toEqual(['secret telegram.token=123:abc']);
  });

  it('never says "Saved" when a secret was not stored, and says what was', async () => {
    const { api } = recordingApi({ secret: { code: 'bad-request', message: 'value: too long' } });
    const outcome = await saveSettings(api, { platforms: { telegram: {} } }, [TOKEN]);
    expect(outcome).toMatchObject({ kind: 'secret-failed', failed: { label: 'Bot token' }, configWritten: true, stored: [] });
    if (outcome.kind === 'refused') throw new Error('not refused');
    const message = saveMessage(outcome);
    expect(message.ok).toBe(false);
    expect(message.text).toBe('Could not store Bot token: value: too long. The other settings are saved.');
    expect(message.text).not.toMatch(/Saved/);
  });
});

describe('removing a platform', () => {
  it('leaves config.json as it would be without it, dropping an empty platforms', () => {
    expect(withoutPlatform({ agent: { type: 'builtin' }, platforms: { telegram: {} } }, 'telegram')).toEqual({ agent: { type: 'builtin' } });
    expect(withoutPlatform({ platforms: { telegram: {}, irc: { host: 'h' } } }, 'telegram')).toEqual({ platforms: { irc: { host: 'h' } } });
  });

  it('takes it out of config.json first, then its stored secrets, and no one else’s', async () => {
    const { api, calls } = recordingApi();
    const result = await removePlatform(api, { platforms: { matrix: {}, telegram: {} } }, 'matrix', ['matrix.password', 'telegram.token']);
    expect(result).toEqual({ removed: true, problem: null });
    expect(calls).toEqual(['config {"platforms":{"telegram":{}}}', 'secret matrix.password=null']);
  });

  it('keeps everything when config.json refuses, and says why', async () => {
    const { api, calls } = recordingApi({ config: { code: 'conflict', message: 'not saved: config.json has an error' } });
    expect(await removePlatform(api, { platforms: { telegram: {} } }, 'telegram', ['telegram.token'])).toEqual({
      removed: false,
      problem: 'Could not remove Telegram: not saved: config.json has an error.',
    });
    expect(calls).toHaveLength(1);
  });
});
