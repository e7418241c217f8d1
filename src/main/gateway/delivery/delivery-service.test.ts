import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../../shared/api';
import { EventBus } from '../events';
import { ManualClock, openTestDb, removeTempDirs, tempDir } from '../ledger/fixtures/test-ledger';
import { silentLogger } from '../logger';
import { DeliveryService } from './delivery-service';
import { FOUR_PART_REPLY, FOUR_PART_REPLY_ID } from './fixtures/replies';
import { wirePlatform } from './fixtures/wire-platform';
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
});
