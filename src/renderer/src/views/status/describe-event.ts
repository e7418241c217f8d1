import type { GatewayEvent } from '../../../../shared/api';

/** One line per event for the activity view. */
export function describeEvent(event: GatewayEvent): string {
  switch (event.type) {
    case 'gateway.state':
      return `gateway ${event.state}`;
    case 'delivery.changed':
      return `${event.delivery.platform} reply to ${event.delivery.chatId}: ${event.delivery.state} (${event.delivery.chunksDelivered}/${event.delivery.chunksTotal})`;
    case 'sweep.completed':
      return `sweep: claimed ${event.report.claimed}, still owed ${event.report.owed}`;
    case 'ledger.health':
      return event.health.ok ? 'ledger healthy' : `ledger failing: ${event.health.lastError ?? ''}`;
    case 'session.updated':
      return `${event.session.platform} conversation ${event.change}`;
    case 'turn.started':
      return `${event.platform}: the agent is answering`;
    case 'turn.token':
      return '';
    case 'turn.finished':
      return event.error ? `turn ${event.outcome}: ${event.error}` : `turn ${event.outcome}`;
    case 'reply.recorded':
      return `reply recorded in ${event.chunks} part${event.chunks === 1 ? '' : 's'}`;
    case 'platform.state':
      return `${event.platform.name} ${event.platform.state}${event.platform.error ? `: ${event.platform.error}` : ''}`;
    case 'config.changed':
      return event.error ? `configuration not applied: ${event.error}` : 'configuration applied';
    case 'gateway.resumed':
      return `resumed after ${Math.round(event.sleptMs / 1000)} s asleep`;
    case 'pairing.changed':
      return 'pairing requests changed';
  }
}
