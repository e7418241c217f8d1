import type { AdapterEvent, InboundMessage, IntakeOutcome } from '../adapter';

/** Where a message is handed on: an adapter's AdapterStatus. */
export interface MessageEmitter {
  readonly listening: boolean;
  emit(event: AdapterEvent): void;
}

/**
 * Hands a parsed message to the gateway and learns what became of it: the
 * pipeline acks `saved`, `refused` or `not-now`. No listener is `not-now` at
 * once (nobody took it, so the platform must hand it again); no ack within
 * the intake timeout is `timeout`, which an adapter that cannot tell "late"
 * from "not saved" treats as `not-now`.
 */
export class IntakeHandOn {
  constructor(
    private readonly emitter: MessageEmitter,
    /** How long to wait for the pipeline to say the message is saved (default 30 s). */
    private readonly timeoutMs = 30_000,
  ) {}

  /** Emits the message; `settle` is called exactly once with its outcome (synchronously from the ack). */
  give(message: InboundMessage, settle: (outcome: IntakeOutcome | 'timeout') => void): void {
    let settled = false;
    const timer = setTimeout(() => once('timeout'), this.timeoutMs);
    const once = (outcome: IntakeOutcome | 'timeout') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      settle(outcome);
    };
    if (!this.emitter.listening) return once('not-now');
    this.emitter.emit({ type: 'message', message, ack: once });
  }

  /** The outcome, keeping a timeout apart (email: a late save is checked for when the message comes again). */
  wait(message: InboundMessage): Promise<IntakeOutcome | 'timeout'> {
    return new Promise((resolve) => this.give(message, resolve));
  }

  /** The outcome, a timeout counting as `not-now`: the platform hands the message again. */
  async handOn(message: InboundMessage): Promise<IntakeOutcome> {
    const outcome = await this.wait(message);
    return outcome === 'timeout' ? 'not-now' : outcome;
  }
}
