import { ipcRenderer } from 'electron';

/**
 * The preload exposes nothing to the page. It asks the main process for a
 * MessagePort to the gateway process and hands each one it receives (a new one
 * after every gateway restart) to the page, which speaks the API protocol on it.
 */
ipcRenderer.on('homing:port', (event) => {
  // file:// pages have an opaque origin, so the target origin must be '*';
  // the message never leaves this window.
  window.postMessage('homing:port', '*', event.ports);
});
ipcRenderer.send('homing:request-port');
