import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../../shared/api';
import { EventBus } from '../events';
import { ManualClock, openTestDb, removeTempDirs, tempDir } from '../ledger/fixtures/test-ledger';
import { silentLogger } from '../logger';
import { DeliveryService } from './delivery-service';
import { FOUR_PART_REPLY, FOUR_PART_REPLY_ID } from './fixtures/replies';
import { wirePlatform } from './fixtures/wire-platform';
import { FALLBACK_LIMITS, splitReply } from './reply-parts';
import { waitUntil } from '../../../../test/support/wait';

afterEach(removeTempDirs);

describe('the delivery service (the gateway’s seam for adapters)', () => {
  it('keeps a reply owed while its platform is absent and sends it when the adapter registers', async () => {
    const dir = tempDir();
    const db = openTestDb(join(dir, 'homing.db'));
    const clock = new ManualClock();
    const bus = new EventBus(silentLogger);
    const events: GatewayEvent[] = [];
    bus.on((event) => events.push(event));
    const service = DeliveryService.start({ db, clock, logger: silentLogger, bus });

    expect(await service.deliverReply('irc', FOUR_PART_REPLY)).toEqual({ status: 'waiting', id: FOUR_PART_REPLY_ID });
    expect(service.sweepNow()).toMatchObject({ claimed: 0, waitingForPlatform: 1, owed: 1 });

    const platform = wirePlatform(join(dir, 'wire.jsonl'));
    service.registerPlatform(platform);
    await waitUntil('the reply delivered', () => service.ledger.getDelivery(FOUR_PART_REPLY_ID)?.state === 'delivered');
    expect(platform.requests().map((request) => request.text)).toEqual(FOUR_PART_REPLY.chunks);
    expect(service.ledger.getDelivery(FOUR_PART_REPLY_ID)).toMatchObject({ state: 'delivered', attempts: 0 });

    const types = events.map((event) => (event.type === 'delivery.changed' ? `${event.type}:${event.delivery.state}` : event.type));
    expect(types).toEqual(expect.arrayContaining(['sweep.completed', 'delivery.changed:pending', 'delivery.changed:attempting', 'delivery.changed:delivered']));
    await service.stop();
    // A clean stop marks the instance stopped: another gateway may take over at once.
    expect(db.prepare('SELECT stopped_at FROM ledger_instances WHERE id = ?').get(service.ledger.instanceId)).toEqual({ stopped_at: clock.now() });
    db.close();
  });

  it('splits a reply to its platform\'s limits when it records it, connected or not, and sends those parts', async () => {
    const dir = tempDir();
    const db = openTestDb(join(dir, 'homing.db'));
    const limits = { maxLength: 60, unit: 'bytes' } as const;
    const service = DeliveryService.start({ db, clock: new ManualClock(), logger: silentLogger, bus: new EventBus(silentLogger), limitsOf: (name) => (name === 'irc' ? limits : undefined) });
    const content = 'Sure — here is what I found, in a few short sentences. '.repeat(4).trim();
    const { chunks: _split, ...unsplit } = FOUR_PART_REPLY;
    const reply = { ...unsplit, content };
    const outcome = await service.deliverReply('irc', reply);
    expect(outcome).toMatchObject({ status: 'waiting' });
    const id = (outcome as { id: string }).id;
    const expected = splitReply(content, limits);
    expect(expected.length).toBeGreaterThan(3);
    expect(service.ledger.getDelivery(id)).toMatchObject({ state: 'pending', chunksTotal: expected.length });
    const platform = wirePlatform(join(dir, 'wire.jsonl'));
    service.registerPlatform(platform);
    await waitUntil('the reply delivered', () => service.ledger.getDelivery(id)?.state === 'delivered');
    expect(platform.requests().map((request) => request.text)).toEqual(expected);
    // A platform it knows no limits of: the fallback's.
    const other = await service.record('elsewhere', { ...reply, messageRef: 'msg-43' });
    expect(other.reply.chunks).toEqual(splitReply(content, FALLBACK_LIMITS));
    await service.stop();
    db.close();
  });

  it('credits the awake clock with the time between sweeps less the time the machine was measured suspended', async () => {
    const db = openTestDb(join(tempDir(), 'homing.db'));
    const clock = new ManualClock();
    let suspended = 0;
    const service = DeliveryService.start({ db, clock, logger: silentLogger, bus: new EventBus(silentLogger), suspendedMs: () => suspended });
    const awake = () => (db.prepare(`SELECT value FROM ledger_meta WHERE key = 'awake_ms'`).get() as { value: number }).value;
    const start = awake();
    clock.advance(60_000);
    suspended += 50_000; // a sleep of 50 s within the minute
    service.sweepNow();
    expect(awake() - start).toBe(10_000);
    clock.advance(30_000); // awake (a stall counts too)
    service.sweepNow();
    expect(awake() - start).toBe(40_000);
    await service.stop();
    db.close();
  });
});
