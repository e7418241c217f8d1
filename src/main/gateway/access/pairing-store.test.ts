import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger';
import { PAIRING_FILE, PairingStore } from './pairing-store';

describe('pairing new senders', () => {
  let dir: string;
  let now: number;
  const open = () => new PairingStore(dir, { clock: { now: () => now, monotonic: () => now }, logger: silentLogger, pseudonym: (platform, id) => `user_${platform.length}${id.padStart(11, '0')}`.slice(0, 17) });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'homing-pairing-'));
    now = 1_000_000;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('tells an unknown sender a code once an hour, and approving it lets them in (kept across a restart, 0600)', () => {
    const store = open();
    const sender = { id: '555', chatId: '555', name: 'Carol' };
    const first = store.request('telegram', sender);
    expect(first?.code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    expect(store.request('telegram', sender)).toBeUndefined();
    now += 61 * 60 * 1000;
    expect(store.request('telegram', sender)).toEqual(first);
    expect(store.decide(first!.code.toLowerCase(), 'approve')).toMatchObject({ ok: true, name: 'Carol', chatId: '555' });
    const reopened = open();
    expect(reopened.isApproved('telegram', '555')).toBe(true);
    expect(reopened.isApproved('irc', '555')).toBe(false);
    expect(reopened.request('telegram', sender)).toBeUndefined();
    expect(statSync(join(dir, PAIRING_FILE)).mode & 0o777).toBe(0o600);
  });

  it('never answers a denied sender again, and shows pseudonyms, never raw ids', () => {
    const store = open();
    const code = store.request('telegram', { id: '777', chatId: '777', name: 'Mallory' })!.code;
    const view = store.view();
    expect(view.requests).toEqual([{ platform: 'telegram', code, name: 'Mallory', sender: expect.stringMatching(/^user_/), requestedAt: now }]);
    expect(store.decide(code, 'deny').ok).toBe(true);
    now += 24 * 60 * 60 * 1000;
    expect(store.request('telegram', { id: '777', chatId: '777', name: 'Mallory' })).toBeUndefined();
    expect(store.isApproved('telegram', '777')).toBe(false);
    expect(store.decide(code, 'approve')).toMatchObject({ ok: false });
    expect(store.view().denied.map((entry) => entry.name)).toEqual(['Mallory']);
  });

  it('keeps at most 50 waiting per platform: a crowd of strangers pushes out the oldest, not the file size', () => {
    const store = open();
    for (let i = 0; i < 80; i++) store.request('telegram', { id: String(i), chatId: String(i), name: undefined });
    const waiting = store.view().requests;
    expect(waiting).toHaveLength(50);
    expect(new Set(waiting.map((request) => request.code)).size).toBe(50);
  });
});
