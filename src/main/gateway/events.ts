import type { GatewayEvent } from '../../shared/api';
import type { Logger } from './logger';

type Listener = (event: GatewayEvent) => void;

/** The in-process event bus: every step of the gateway announces itself here. */
export class EventBus {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly logger: Logger) {}

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether anybody listens now: an event costly to build is built for nobody else. */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /** A failing listener is logged and skipped; it never breaks the emitter. */
  emit(event: GatewayEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error('an event listener failed', { type: event.type, error });
      }
    }
  }
}
