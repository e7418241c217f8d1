import type { Logger } from '../logger';
import type { AdapterEvent } from './adapter';

/**
 * An adapter's listeners: `onEvent` hands them out, `emit` tells each one, and
 * a listener that throws is logged and never stops the others or the adapter.
 */
export class AdapterEvents {
  private readonly listeners = new Set<(event: AdapterEvent) => void>();

  constructor(
    private readonly platform: string,
    private readonly logger: Logger,
  ) {}

  /** Whether anyone listens (a message nobody hears is handed back to the platform, not taken). */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  listen(listener: (event: AdapterEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: AdapterEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error(`${this.platform}: an event listener threw`, { error });
      }
    }
  }
}
