import type { GatewayEvent } from '../../../../shared/api';
import { clockTime } from '../../format';
import { chatLabel, deliveryKind, errorWords, platformLabel } from '../../plain-words';

/** How an entry reads at a glance: something went wrong, something good happened, or neither. */
export type Tone = 'bad' | 'good' | 'plain';

export interface Described {
  readonly text: string;
  readonly tone: Tone;
}

const plain = (text: string): Described => ({ text, tone: 'plain' });
const good = (text: string): Described => ({ text, tone: 'good' });
const bad = (text: string): Described => ({ text, tone: 'bad' });

function upper(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * One sentence per event for the activity log, in the window's words (no event
 * names); null for what the log leaves out: streamed tokens, every message
 * (the transcript shows them) and sweeps that changed nothing (one every few seconds).
 */
export function describeEvent(event: GatewayEvent): Described | null {
  switch (event.type) {
    case 'gateway.state':
      return event.state === 'running' ? good('The gateway is running.') : plain(`The gateway is ${event.state}.`);
    case 'delivery.changed': {
      const row = event.delivery;
      const to = `a reply to ${chatLabel(row)} on ${platformLabel(row.platform)}`;
      switch (deliveryKind(row)) {
        case 'waiting':
          return plain(`${upper(to)} is waiting to be sent.`);
        case 'sending':
          return plain(`Sending ${to}${row.chunksTotal > 1 ? ` (${row.chunksDelivered} of ${row.chunksTotal} parts arrived)` : ''}.`);
        case 'delivered':
          return good(`Delivered ${to}.`);
        case 'retrying':
          return bad(`Could not send ${to}: ${errorWords(row.lastError)} Homing tries again${row.nextAttemptAt ? ` at ${clockTime(row.nextAttemptAt)}` : ''}.`);
        case 'needs-you':
          return bad(`${upper(platformLabel(row.platform))} refused ${to} for good: ${errorWords(row.lastError)} It needs you (Deliveries).`);
        case 'given-up':
          return bad(`Homing stopped trying to send ${to}.`);
        case 'discarded':
          return plain(`You discarded ${to}.`);
      }
      return null;
    }
    case 'sweep.completed': {
      const { claimed, abandoned, owed } = event.report;
      if (claimed === 0 && abandoned === 0) return null;
      return plain(`Checked for owed replies: ${claimed} sent again, ${abandoned} given up, ${owed} still owed.`);
    }
    case 'ledger.health':
      return event.health.ok ? good('The delivery ledger works again.') : bad(`The delivery ledger could not write: ${errorWords(event.health.lastError)}`);
    case 'session.updated':
      if (event.change === 'created') return plain(`New conversation${event.session.title ? ` with ${event.session.title}` : ''} on ${platformLabel(event.session.platform)}.`);
      if (event.change === 'ended') return plain(`A conversation on ${platformLabel(event.session.platform)} ended; the next message starts a new one.`);
      return null;
    case 'turn.started':
      return plain(`${event.agent ? `The agent (${event.agent})` : 'The agent'} is answering on ${platformLabel(event.platform)}.`);
    case 'turn.token':
      return null;
    case 'turn.finished':
      switch (event.outcome) {
        case 'answered':
          return good('The agent answered.');
        case 'agent-error':
          return bad(`The agent failed: ${event.error ?? 'no reason was given'}.`);
        case 'cancelled':
          return plain('The answer was stopped.');
        case 'command':
          return plain('Homing answered a command itself.');
      }
      return null;
    case 'reply.recorded':
      return null;
    case 'platform.state': {
      const { name, state, error } = event.platform;
      const label = upper(platformLabel(name));
      if (state === 'connected') return good(`${label} is connected.`);
      if (state === 'connecting') return plain(`Connecting to ${platformLabel(name)}…`);
      if (state === 'auth-failed') return bad(`${label} refused the login${error ? `: ${error}` : ''}. Check the settings in Platforms.`);
      if (state === 'degraded') return bad(`${label} is connected, but not working well${error ? `: ${errorWords(error)}` : '.'}`);
      return bad(`${label} is not connected${error ? `: ${errorWords(error)}` : '.'}`);
    }
    case 'config.changed':
      return event.error ? bad(`Settings not applied: ${event.error}`) : good('Settings applied.');
    case 'gateway.resumed':
      return plain(`The computer woke up after ${Math.max(1, Math.round(event.sleptMs / 60_000))} min asleep; Homing checked its connections.`);
    case 'sender.refused':
      return bad(`${upper(platformLabel(event.platform))} refused ${event.sender}: not on the list of who may talk to the agent (Platforms → ${platformLabel(event.platform)}).`);
    case 'platform.notice':
      return bad(`${upper(platformLabel(event.platform))}: ${event.text}`);
    case 'pairing.changed':
      return plain('Pairing requests changed (Platforms shows who asked).');
    case 'schedules.changed':
      // A run's reply shows up as its own events; the list itself is the Schedules view's.
      return null;
  }
}
