import type { ServerResponse } from 'node:http';

/**
 * A fake's `holdDownloads()` switch, for tests that kill the gateway while a
 * file's download is under way: while a hold is on, the fake takes a download
 * request and answers nothing; the release serves every request still waiting,
 * as it would have been served. Not a behaviour of any service: a test's hand
 * on the wire.
 */
export class DownloadHold {
  private held: Set<() => void> | undefined;

  /** Starts holding; the returned function ends this hold and serves what waits. */
  hold(): () => void {
    const held = new Set<() => void>();
    this.held = held;
    return () => {
      if (this.held === held) this.held = undefined;
      for (const serve of [...held]) serve();
      held.clear();
    };
  }

  /**
   * While a hold is on, keeps `serve` for the release and says true (the caller
   * answers nothing now); otherwise false (the caller serves at once). With
   * `response`, a client that goes away meanwhile is forgotten, and `gone` told.
   */
  keep(serve: () => void, response?: ServerResponse, gone?: () => void): boolean {
    const held = this.held;
    if (!held) return false;
    const onClose = () => {
      held.delete(release);
      gone?.();
    };
    const release = () => {
      held.delete(release);
      response?.off('close', onClose);
      serve();
    };
    held.add(release);
    response?.once('close', onClose);
    return true;
  }

  /** Resolves at the release (at once while nothing is held), or when `response` closes first. */
  wait(response?: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      if (!this.keep(resolve, response, resolve)) resolve();
    });
  }

  /** Serves everything waiting and ends any hold (the fake stops). */
  releaseAll(): void {
    const held = this.held;
    this.held = undefined;
    for (const serve of [...(held ?? [])]) serve();
  }
}
