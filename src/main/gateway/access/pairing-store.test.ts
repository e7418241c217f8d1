import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger';
import { MAX_PENDING, PAIRING_FILE, PairingStore } from './pairing-store';

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
    store.told('telegram', '555', first!.code);
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
    expect(view.requests).toEqual([{ platform: 'telegram', code, name: 'Mallory', sender: expect.stringMatching(/^user_/), requestedAt: now, told: false }]);
    expect(store.decide(code, 'deny').ok).toBe(true);
    now += 24 * 60 * 60 * 1000;
    expect(store.request('telegram', { id: '777', chatId: '777', name: 'Mallory' })).toBeUndefined();
    expect(store.isApproved('telegram', '777')).toBe(false);
    expect(store.decide(code, 'approve')).toMatchObject({ ok: false });
    expect(store.view().denied.map((entry) => entry.name)).toEqual(['Mallory']);
  });

  it('never marks a sender told until the code went out: an untold code stays owed, across a restart', () => {
    const store = open();
    const sender = { id: '555', chatId: 'chat-555', name: 'Carol' };
    const { code } = store.request('telegram', sender)!;
    // The platform could not send it (budget, connection): writing again still finds it owed.
    expect(store.request('telegram', sender)).toEqual({ code });
    expect(store.view().requests[0]!.told).toBe(false);
    const reopened = open();
    expect(reopened.owed('telegram')).toEqual([{ senderId: '555', chatId: 'chat-555', code, requestedAt: now }]);
    reopened.told('telegram', '555', code);
    expect(reopened.owed('telegram')).toEqual([]);
    expect(reopened.view().requests[0]!.told).toBe(true);
    expect(reopened.request('telegram', sender)).toBeUndefined(); // told within the hour
    expect(open().owed('telegram')).toEqual([]);
  });

  it('a code decided while it was on its way is not marked told, and another sender\'s code is not either', () => {
    const store = open();
    const { code } = store.request('irc', { id: 'carol', chatId: 'Carol', name: 'Carol' })!;
    const other = store.request('irc', { id: 'dave', chatId: 'Dave', name: 'Dave' })!.code;
    store.told('irc', 'carol', other);
    expect(store.owed('irc').map((entry) => entry.senderId)).toEqual(['carol', 'dave']);
    expect(store.decide(code, 'deny').ok).toBe(true);
    store.told('irc', 'carol', code);
    expect(store.view().denied.map((entry) => entry.name)).toEqual(['Carol']);
    expect(store.owed('irc').map((entry) => entry.senderId)).toEqual(['dave']);
  });

  it('a flood cannot push out earlier requests: past the cap new senders are only counted, and the view shows the flood', () => {
    const store = open();
    const carol = store.request('irc', { id: 'carol', chatId: 'carol', name: 'carol' })!.code;
    now += 60_000;
    for (let i = 0; i < MAX_PENDING + 30; i++) store.request('irc', { id: `bot${i}`, chatId: `bot${i}`, name: `bot${i}` });
    const view = store.view();
    expect(view.requests).toHaveLength(MAX_PENDING);
    expect(view.requests[0]).toMatchObject({ code: carol, name: 'carol' });
    expect(new Set(view.requests.map((request) => request.code)).size).toBe(MAX_PENDING);
    expect(store.owed('irc')[0]!.senderId).toBe('carol');
    expect(view.floods).toEqual([{ platform: 'irc', lastHour: MAX_PENDING + 31, notKept: 31, since: now - 60_000 }]);
    // Nothing of the flood shows on another platform, and none is shown once the hour is over.
    expect(store.view().floods.map((flood) => flood.platform)).toEqual(['irc']);
    now += 61 * 60 * 1000;
    expect(store.view().floods).toEqual([]);
    expect(store.view().requests).toHaveLength(MAX_PENDING);
  });

  it('the owner can forget a flood that filled the list: the hour\'s requests go, older ones and decisions stay, and new senders are kept again', () => {
    const store = open();
    const old = store.request('irc', { id: 'carol', chatId: 'carol', name: 'carol' })!.code;
    store.request('irc', { id: 'eve', chatId: 'eve', name: 'eve' });
    store.decide(store.view().requests[1]!.code, 'deny');
    now += 2 * 60 * 60 * 1000;
    for (let i = 0; i < MAX_PENDING + 5; i++) store.request('irc', { id: `bot${i}`, chatId: `bot${i}`, name: undefined });
    expect(store.request('irc', { id: 'dave', chatId: 'dave', name: 'dave' })).toBeUndefined();
    expect(store.dismissFlood('irc')).toBe(MAX_PENDING - 1);
    expect(store.view().requests.map((request) => request.code)).toEqual([old]);
    expect(store.view().floods).toEqual([]);
    expect(store.view().denied.map((entry) => entry.name)).toEqual(['eve']);
    expect(store.request('irc', { id: 'dave', chatId: 'dave', name: 'dave' })).toBeDefined();
  });

  it('a few new senders in an hour are no flood', () => {
    const store = open();
    for (let i = 0; i < 10; i++) store.request('telegram', { id: String(i), chatId: String(i), name: undefined });
    expect(store.view().floods).toEqual([]);
    store.request('telegram', { id: '10', chatId: '10', name: undefined });
    expect(store.view().floods).toEqual([{ platform: 'telegram', lastHour: 11, notKept: 0, since: now }]);
  });

  it('reads a pairing file from before owed codes (every request had been marked told)', () => {
    const request = { platform: 'telegram', senderId: '1', chatId: '1', name: 'Old', code: 'ABCDEFGH', requestedAt: now, toldAt: now };
    writeFileSync(join(dir, PAIRING_FILE), JSON.stringify({ v: 1, approved: [], denied: [], requests: [request] }));
    const store = open();
    expect(store.view().requests).toMatchObject([{ code: 'ABCDEFGH', told: true }]);
    expect(store.owed('telegram')).toEqual([]);
  });
});
