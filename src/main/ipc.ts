/**
 * The main process's IPC handlers, each behind the same sender check: a message
 * is handled only when it comes from our own renderer page (the exact file, or
 * the dev server's origin) in a window of ours. Register handlers only through
 * `registerShellIpc`, so none can be added without the check.
 */
import { isTrustedRendererUrl } from './security';

/** An IPC event as the handlers use it (Electron's IpcMainEvent). */
export interface IpcEventLike<Sender = unknown> {
  readonly sender: Sender;
  readonly senderFrame: { readonly url: string } | null | undefined;
}

/** The part of ipcMain the shell uses. */
export interface IpcSurface<Sender = unknown> {
  on(channel: string, listener: (event: IpcEventLike<Sender>, ...args: unknown[]) => void): void;
}

export interface ShellIpcHandlers<Sender> {
  /** The preload asks for a MessagePort to the gateway process (at load, and again after a reload). */
  requestPort(sender: Sender): void;
}

export const IPC_CHANNELS = { requestPort: 'homing:request-port' } as const;

export function registerShellIpc<Sender>(
  ipc: IpcSurface<Sender>,
  options: { rendererUrl: string; handlers: ShellIpcHandlers<Sender>; onRefused: (channel: string) => void },
): void {
  const guarded = (channel: string, handle: (event: IpcEventLike<Sender>, ...args: unknown[]) => void): void => {
    ipc.on(channel, (event, ...args) => {
      // The sending frame's URL, not the window's: a subframe could be anything.
      if (!isTrustedRendererUrl(event.senderFrame?.url, options.rendererUrl)) {
        options.onRefused(channel);
        return;
      }
      handle(event, ...args);
    });
  };
  guarded(IPC_CHANNELS.requestPort, (event) => options.handlers.requestPort(event.sender));
}
