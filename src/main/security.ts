/**
 * The window's security settings (Electron's checklist), kept free of electron
 * imports so tests can check them under plain Node.
 */

export interface SecureWebPreferences {
  readonly preload: string;
  readonly contextIsolation: true;
  readonly sandbox: true;
  readonly nodeIntegration: false;
  readonly nodeIntegrationInWorker: false;
  readonly nodeIntegrationInSubFrames: false;
  readonly webSecurity: true;
  readonly allowRunningInsecureContent: false;
  readonly webviewTag: false;
  readonly spellcheck: false;
}

export function secureWebPreferences(preload: string): SecureWebPreferences {
  return {
    preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    spellcheck: false,
  };
}

/**
 * An IPC message is only trusted from our own renderer page: the exact file it
 * was loaded from (or the dev server's origin during `electron-vite dev`).
 */
export function isTrustedRendererUrl(senderUrl: string | undefined, rendererUrl: string): boolean {
  if (!senderUrl) return false;
  let sender: URL;
  let expected: URL;
  try {
    sender = new URL(senderUrl);
    expected = new URL(rendererUrl);
  } catch {
    return false;
  }
  if (expected.protocol === 'file:') return sender.protocol === 'file:' && sender.pathname === expected.pathname;
  return sender.origin === expected.origin;
}
