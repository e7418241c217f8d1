import type { ApiHandlers } from '../api/server';
import { ApiFailure } from '../api/server';
import type { DeliveryService } from './delivery-service';

type DeliveryHandlers = Pick<
  ApiHandlers,
  'listDeliveries' | 'retryDelivery' | 'discardDelivery' | 'getDeliveryText' | 'getDeliveries' | 'retryDeliveries' | 'sweepNow' | 'getLedgerHealth'
>;

/** The API's delivery methods. Expected refusals are ApiFailures; the params were validated on arrival. */
export function deliveryApiHandlers(service: () => DeliveryService): DeliveryHandlers {
  return {
    listDeliveries: (params) => service().ledger.listDeliveries(params ?? {}),
    retryDelivery: ({ id }) => {
      const result = service().ledger.retryDelivery(id);
      if (!result.ok) throw new ApiFailure(result.reason, result.message);
      // Its platform may be connected right now: do not wait for the timer.
      service().sweepNow();
      return service().ledger.getDelivery(id) ?? result.row;
    },
    discardDelivery: ({ id }) => {
      const result = service().ledger.discardDelivery(id);
      if (!result.ok) throw new ApiFailure(result.reason, result.message);
      return result.row;
    },
    getDeliveryText: ({ id }) => {
      const text = service().ledger.deliveryText(id);
      if (text === undefined) throw new ApiFailure('not-found', `no delivery with id ${id}`);
      return { id, text };
    },
    getDeliveries: ({ ids }) => ids.flatMap((id) => service().ledger.getDelivery(id) ?? []),
    retryDeliveries: ({ platform }) => {
      const retried = service().ledger.retryPlatform(platform);
      // Pending rows of a connected platform go out now; the others wait for it.
      service().sweepNow();
      return { retried };
    },
    sweepNow: () => {
      const report = service().sweepNow();
      if (!report) throw new ApiFailure('unavailable', `the delivery ledger failed: ${service().ledgerHealth().lastError ?? 'unknown error'}`);
      return report;
    },
    getLedgerHealth: () => service().ledgerHealth(),
  };
}
