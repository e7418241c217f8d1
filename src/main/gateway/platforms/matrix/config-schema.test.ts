import { describe, expect, it } from 'vitest';
import { homingConfigSchema } from '../../homing-config';

const parse = (platforms: unknown) => homingConfigSchema.safeParse({ platforms });
const firstIssue = (platforms: unknown) => {
  const result = parse(platforms);
  return result.success ? undefined : { path: result.error.issues[0]!.path.join('.'), message: result.error.issues[0]!.message };
};
const base = { homeserver: 'https://matrix.example.org/', user: '@homing:example.org' };

describe('the matrix section of config.json', () => {
  it('needs a homeserver and a user; defaults to pairing, no rooms, a 30 s long poll', () => {
    const result = parse({ matrix: base });
    expect(result.success && result.data.platforms.matrix).toEqual({
      enabled: true,
      homeserver: 'https://matrix.example.org',
      user: '@homing:example.org',
      dmPolicy: 'pairing',
      allowFrom: [],
      rooms: {},
      deviceName: 'Homing',
      pollTimeoutSeconds: 30,
    });
    expect(firstIssue({ matrix: { user: '@homing:example.org' } })?.path).toBe('platforms.matrix.homeserver');
    expect(firstIssue({ matrix: { ...base, homeserver: 'matrix.example.org' } })).toMatchObject({ message: 'must be a URL like https://matrix.example.org' });
  });

  it('names what is wrong: a user id, a room id, a secret written into the file', () => {
    expect(firstIssue({ matrix: { ...base, allowFrom: ['alice'] } })).toEqual({ path: 'platforms.matrix.allowFrom.0', message: 'must be a Matrix user id like @alice:example.org' });
    expect(firstIssue({ matrix: { ...base, rooms: { '#family:example.org': {} } } })).toMatchObject({ path: 'platforms.matrix.rooms.#family:example.org', message: expect.stringMatching(/not a room id/) });
    expect(firstIssue({ matrix: { ...base, accessToken: 'syt_x' } })).toMatchObject({ path: 'platforms.matrix.accessToken', message: expect.stringMatching(/does not belong in config.json/) });
    expect(firstIssue({ matrix: { ...base, password: 'x' } })).toMatchObject({ path: 'platforms.matrix.password' });
    expect(firstIssue({ matrix: { ...base, accessTokenEnv: 'HOME' } })?.path).toBe('platforms.matrix.accessTokenEnv');
    const rooms = parse({ matrix: { ...base, rooms: { '!AbC:example.org': { allowFrom: ['*'], requireMention: false } } } });
    expect(rooms.success && rooms.data.platforms.matrix?.rooms).toEqual({ '!AbC:example.org': { allowFrom: ['*'], requireMention: false } });
  });
});
