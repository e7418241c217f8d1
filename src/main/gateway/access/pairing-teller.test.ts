import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../logger';
import { PairingReplyLimit } from './pairing-replies';
import type { OwedCode } from './pairing-store';
import { PairingTeller } from './pairing-teller';

/** An owed list as the store keeps it (oldest first), with what the teller sent and marked told. */
function world(options: { budget: PairingReplyLimit; connected?: () => boolean; send?: (owed: OwedCode) => boolean }) {
  let owed: OwedCode[] = [];
  const sent: string[] = [];
  const told: string[] = [];
  const teller = new PairingTeller(
    {
      platform: 'irc',
      access: {
        owedPairing: () => owed,
        pairingTold: (senderId, code) => {
          told.push(senderId);
          owed = owed.filter((entry) => !(entry.senderId === senderId && entry.code === code));
        },
      },
      budget: options.budget.on(() => Date.now()),
      tell: async (entry) => {
        const ok = options.send?.(entry) ?? true;
        if (ok) sent.push(entry.senderId);
        return ok;
      },
      connected: options.connected ?? (() => true),
      logger: silentLogger,
    },
    () => Date.now(),
  );
  const ask = (senderId: string) => {
    owed = [...owed, { senderId, chatId: senderId, code: `code-${senderId}`, requestedAt: Date.now() }];
    teller.kick();
  };
  return { ask, sent, told, owed: () => owed };
}

describe('PairingTeller', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('tells a person who writes after a burst of strangers in the budget\'s next window, and the earlier strangers before later ones', async () => {
    const { ask, sent, told } = world({ budget: new PairingReplyLimit(4, 1_000) });
    for (let i = 0; i < 100; i++) ask(`stranger${i}`);
    await vi.advanceTimersByTimeAsync(10);
    ask('carol');
    await vi.advanceTimersByTimeAsync(10);
    expect(sent).toHaveLength(4);
    expect(sent).not.toContain('carol');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent).toHaveLength(8);
    expect(sent.slice(4, 6)).toContain('carol');
    // The other half of each window goes to the oldest: nobody who wrote before the burst's end starves.
    expect(sent.filter((nick) => nick !== 'carol').slice(0, 5)).toEqual(expect.arrayContaining(['stranger0', 'stranger1']));
    expect(told).toEqual(sent);
  });

  it('marks nobody told whose code did not go out, and tries again later', async () => {
    let refusing = true;
    const { ask, sent, told, owed } = world({ budget: new PairingReplyLimit(10, 1_000), send: () => !refusing });
    ask('carol');
    await vi.advanceTimersByTimeAsync(10);
    expect(sent).toEqual([]);
    expect(told).toEqual([]);
    expect(owed().map((entry) => entry.senderId)).toEqual(['carol']);
    refusing = false;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(told).toEqual(['carol']);
  });

  it('waits for the connection, telling owed codes (from before a restart) once it is there', async () => {
    let connected = false;
    const { ask, told } = world({ budget: new PairingReplyLimit(10, 1_000), connected: () => connected });
    ask('carol');
    await vi.advanceTimersByTimeAsync(20_000);
    expect(told).toEqual([]);
    connected = true;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(told).toEqual(['carol']);
  });
});
