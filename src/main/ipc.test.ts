import { describe, expect, it } from 'vitest';
import { IPC_CHANNELS, registerShellIpc, type IpcEventLike, type IpcSurface } from './ipc';

const PAGE = 'file:///opt/Homing/resources/app.asar/out/renderer/index.html';

/** ipcMain as the shell sees it: the listeners by channel, to be called with any sender. */
function fakeIpcMain() {
  const listeners = new Map<string, (event: IpcEventLike<string>, ...args: unknown[]) => void>();
  const ipc: IpcSurface<string> = { on: (channel, listener) => void listeners.set(channel, listener) };
  return { ipc, listeners };
}

function setup() {
  const { ipc, listeners } = fakeIpcMain();
  const handled: string[] = [];
  const refused: string[] = [];
  registerShellIpc(ipc, {
    rendererUrl: PAGE,
    handlers: { requestPort: (sender) => handled.push(`requestPort from ${sender}`) },
    onRefused: (channel) => refused.push(channel),
  });
  return { listeners, handled, refused };
}

describe('the IPC handlers', () => {
  it('are all registered through the sender check', () => {
    const { listeners } = setup();
    expect([...listeners.keys()].sort()).toEqual(Object.values(IPC_CHANNELS).sort());
  });

  it('each reject a foreign sender', () => {
    const foreign: IpcEventLike<string>['senderFrame'][] = [
      { url: 'https://evil.example/' },
      { url: 'file:///tmp/evil.html' },
      { url: 'data:text/html,<script></script>' },
      { url: '' },
      null,
      undefined,
    ];
    const { listeners, handled, refused } = setup();
    for (const [channel, listener] of listeners) {
      for (const senderFrame of foreign) listener({ sender: 'attacker', senderFrame });
      expect(refused.filter((entry) => entry === channel)).toHaveLength(foreign.length);
    }
    expect(handled).toEqual([]);
  });

  it('answer our own page', () => {
    const { listeners, handled } = setup();
    listeners.get('homing:request-port')!({ sender: 'window 1', senderFrame: { url: PAGE + '#/deliveries' } });
    expect(handled).toEqual(['requestPort from window 1']);
  });
});
