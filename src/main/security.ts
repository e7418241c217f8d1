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

/**
 * The page the window loads. ELECTRON_RENDERER_URL (electron-vite's dev server)
 * is honoured only in a development run: in a packaged app it would let
 * whoever sets the environment choose the page, and the URL IPC trusts.
 */
export function rendererUrlFor(isPackaged: boolean, env: NodeJS.ProcessEnv, builtPage: string): string {
  const dev = env.ELECTRON_RENDERER_URL;
  return !isPackaged && dev ? dev : builtPage;
}

/** The part of an Electron Session the permission policy uses. */
export interface PermissionSession {
  setPermissionCheckHandler(handler: () => boolean): void;
  setPermissionRequestHandler(handler: (contents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
}

/**
 * The window needs no permission at all (camera, microphone, notifications,
 * clipboard, geolocation, HID, serial…): every check answers no and every
 * request is refused. Notifications are shown by the main process, not the page.
 */
export function denyAllPermissions(session: PermissionSession): void {
  session.setPermissionCheckHandler(() => false);
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
}

/**
 * The page's Content-Security-Policy: only our own scripts, no eval, no plugins,
 * no framing; images and audio also from the page's own object URLs (blob:).
 * `webSockets` are the sockets the page may open besides its own origin
 * ('self' already covers a WebSocket to the page's own host and port).
 */
export function contentSecurityPolicy(webSockets = ''): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    // blob: only for the object URLs the window makes of a conversation's photos and voice notes (MediaItems).
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    `connect-src 'self'${webSockets ? ` ${webSockets}` : ''}`,
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/**
 * The tray app's policy, also sent as a response header where the page comes
 * over http (the dev server), so it holds even if the page's own <meta> tag is
 * changed. No WebSocket: the tray window talks to the gateway over a MessagePort.
 */
export const CONTENT_SECURITY_POLICY = contentSecurityPolicy();

/** Only web links leave the app: never file:, javascript:, custom schemes or smb: shares. */
export function isExternalWebLink(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.hostname !== '';
  } catch {
    return false;
  }
}

/** The part of a WebContents the guard uses. */
export interface GuardedContents {
  on(event: 'will-navigate' | 'will-redirect', listener: (event: { preventDefault(): void; url: string }) => void): void;
  on(event: 'will-attach-webview', listener: (event: { preventDefault(): void }) => void): void;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
}

export interface ContentsGuardOptions {
  /** shell.openExternal. */
  readonly openExternal: (url: string) => void;
  /** Whether a window of ours has the focus: a link the user clicked comes from a focused window. */
  readonly focused: () => boolean;
  readonly now?: () => number;
  readonly log?: (message: string) => void;
}

/**
 * Every web contents (windows, and anything else that ever gets created): no
 * navigation away from the page, no webviews, no new windows. A link the user
 * clicks (target=_blank, which arrives as a window-open request) opens in the
 * browser when it is http(s) and a window of ours is focused, at most one a
 * second, so a compromised page cannot spray URLs at the OS.
 */
export function guardWebContents(contents: GuardedContents, options: ContentsGuardOptions): void {
  const now = options.now ?? (() => Date.now());
  let lastOpenAt = -Infinity;
  const deny = (event: { preventDefault(): void; url: string }): void => {
    event.preventDefault();
    options.log?.('refused a navigation away from the app');
  };
  contents.on('will-navigate', deny);
  contents.on('will-redirect', deny);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (isExternalWebLink(url) && options.focused() && now() - lastOpenAt >= 1_000) {
      lastOpenAt = now();
      options.openExternal(url);
    } else {
      options.log?.('refused to open a window or a link');
    }
    return { action: 'deny' };
  });
}
