import type { IntakeContract } from '../intake';

/**
 * How Signal hands messages over to Homing through signal-cli, in manual
 * receive mode (`--receive-mode manual`): Signal's server queues a message for
 * the linked device until signal-cli takes it, and signal-cli takes messages
 * only while Homing is subscribed (`subscribeReceive`; the subscription ends
 * with Homing's connection), so nothing is taken while Homing is away.
 * signal-cli acknowledges a message to the server before handing it over and
 * keeps no copy after (ReceiveHelper), so Homing writes it to its own journal
 * the moment it reads it (inbox-journal.ts). How long Signal's server keeps a
 * queued message is the server's setting: Signal-Server's default is 14 days
 * (MessageDynamoDbConfiguration `timeToLive = Duration.ofDays(14)`; 7 days in
 * earlier versions): Homing declares the shorter, 7 days. The docs' row
 * (docs/platforms.md) says the same.
 */
export const SIGNAL_QUEUE_MS = 7 * 24 * 3_600_000;

export const signalIntake = {
  kind: 'confirmed-cursor',
  keeps: { kind: 'for', ms: SIGNAL_QUEUE_MS },
  outage:
    'Signal\u2019s server queues messages for Homing\u2019s linked device (at least 7 days), and signal-cli in manual receive mode takes them only while Homing is connected: an outage shorter than that costs nothing. signal-cli confirms a message to Signal before handing it over and keeps no copy, so Homing writes each to disk the moment it reads it; a crash can cost only what signal-cli had just written to Homing\u2019s connection and Homing had not read yet. A daemon started without --receive-mode manual takes messages while Homing is away, and those are lost (Homing says so).',
} as const satisfies IntakeContract;
