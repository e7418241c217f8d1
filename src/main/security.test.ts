import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CONTENT_SECURITY_POLICY,
  contentSecurityPolicy,
  denyAllPermissions,
  guardWebContents,
  isExternalWebLink,
  isTrustedRendererUrl,
  rendererUrlFor,
  secureWebPreferences,
  type GuardedContents,
} from './security';

describe("the window's security settings", () => {
  it('follow Electron\'s checklist', () => {
    expect(secureWebPreferences('/app/preload.cjs')).toMatchObject({
      preload: '/app/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
  });

  it('trust IPC only from the renderer page itself', () => {
    const page = 'file:///opt/Homing/resources/app/out/renderer/index.html';
    expect(isTrustedRendererUrl(page, page)).toBe(true);
    expect(isTrustedRendererUrl(page + '#/deliveries', page)).toBe(true);
    expect(isTrustedRendererUrl('file:///tmp/evil.html', page)).toBe(false);
    expect(isTrustedRendererUrl('https://example.com/', page)).toBe(false);
    expect(isTrustedRendererUrl(undefined, page)).toBe(false);
    expect(isTrustedRendererUrl('not a url', page)).toBe(false);
    expect(isTrustedRendererUrl('http://localhost:5173/x', 'http://localhost:5173/')).toBe(true);
    expect(isTrustedRendererUrl('http://localhost:5174/', 'http://localhost:5173/')).toBe(false);
  });
});

/** A WebContents as the guard sees it: listeners by event, and the window-open handler. */
function fakeContents() {
  const listeners = new Map<string, (event: { preventDefault(): void; url: string }) => void>();
  let openHandler: ((details: { url: string }) => { action: 'deny' }) | undefined;
  const contents: GuardedContents = {
    on: (event: string, listener: (event: { preventDefault(): void; url: string }) => void) => void listeners.set(event, listener),
    setWindowOpenHandler: (handler) => (openHandler = handler),
  };
  return {
    contents,
    fire(event: string, url = 'https://example.com/') {
      let prevented = false;
      listeners.get(event)?.({ url, preventDefault: () => (prevented = true) });
      return prevented;
    },
    open: (url: string) => openHandler?.({ url }),
  };
}

describe('the web contents guard', () => {
  it('denies navigation, redirects and webviews', () => {
    const fake = fakeContents();
    guardWebContents(fake.contents, { openExternal: () => {}, focused: () => true });
    expect(fake.fire('will-navigate', 'https://evil.example/')).toBe(true);
    expect(fake.fire('will-navigate', 'file:///etc/passwd')).toBe(true);
    expect(fake.fire('will-redirect')).toBe(true);
    expect(fake.fire('will-attach-webview')).toBe(true);
  });

  it('denies every new window, and opens only http(s) links the user clicked in the browser', () => {
    const fake = fakeContents();
    const opened: string[] = [];
    let focused = true;
    let now = 0;
    guardWebContents(fake.contents, { openExternal: (url) => opened.push(url), focused: () => focused, now: () => now });
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'smb://host/share', 'homing://x', 'not a url']) {
      expect(fake.open(url)).toEqual({ action: 'deny' });
    }
    expect(opened).toEqual([]);
    expect(fake.open('https://example.com/a')).toEqual({ action: 'deny' });
    expect(fake.open('https://example.com/b')).toEqual({ action: 'deny' });
    now += 1_000;
    focused = false;
    fake.open('https://example.com/c');
    focused = true;
    fake.open('http://example.com/d');
    expect(opened).toEqual(['https://example.com/a', 'http://example.com/d']);
  });

  it('recognises web links only', () => {
    expect(isExternalWebLink('https://homing.example/docs')).toBe(true);
    expect(isExternalWebLink('http://127.0.0.1:8080/')).toBe(true);
    expect(isExternalWebLink('file:///x')).toBe(false);
    expect(isExternalWebLink('https://')).toBe(false);
  });
});

describe('the Content-Security-Policy', () => {
  it('allows only our own scripts, no eval, no plugins and no framing', () => {
    const directives = new Map(CONTENT_SECURITY_POLICY.split('; ').map((directive) => [directive.split(' ')[0], directive]));
    expect(directives.get('script-src')).toBe("script-src 'self'");
    expect(directives.get('object-src')).toBe("object-src 'none'");
    expect(directives.get('frame-ancestors')).toBe("frame-ancestors 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval/);
  });

  it('lets images and audio come from the page\'s own object URLs (blob:), and nothing else from blob:', () => {
    const html = readFileSync(new URL('../renderer/index.html', import.meta.url), 'utf8');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1] ?? '';
    for (const policy of [CONTENT_SECURITY_POLICY, contentSecurityPolicy('ws://127.0.0.1:8080'), meta]) {
      const directives = new Map(policy.split('; ').map((directive) => [directive.split(' ')[0], directive]));
      expect(directives.get('img-src')).toBe("img-src 'self' data: blob:");
      expect(directives.get('media-src')).toBe("media-src 'self' blob:");
      expect([...directives.values()].filter((directive) => directive.includes('blob:'))).toHaveLength(2);
    }
  });
});

describe("the tray window's page and permissions", () => {
  const built = 'file:///opt/Homing/resources/app.asar/out/renderer/index.html';

  it('ignores ELECTRON_RENDERER_URL in a packaged app: the environment never chooses the page IPC trusts', () => {
    const env = { ELECTRON_RENDERER_URL: 'http://evil.example/' };
    expect(rendererUrlFor(true, env, built)).toBe(built);
    expect(rendererUrlFor(false, env, built)).toBe('http://evil.example/');
    expect(rendererUrlFor(false, {}, built)).toBe(built);
  });

  it('answers every permission check no and refuses every request', () => {
    let check: (() => boolean) | undefined;
    let request: ((contents: unknown, permission: string, callback: (granted: boolean) => void) => void) | undefined;
    denyAllPermissions({ setPermissionCheckHandler: (handler) => (check = handler), setPermissionRequestHandler: (handler) => (request = handler) });
    expect(check?.()).toBe(false);
    for (const permission of ['media', 'notifications', 'clipboard-read', 'geolocation', 'openExternal', 'hid']) {
      const answers: boolean[] = [];
      request?.({}, permission, (granted) => answers.push(granted));
      expect(answers).toEqual([false]);
    }
  });

  it('opens no WebSocket: neither the header policy nor the page\'s own <meta> allows ws:', () => {
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/ws:/);
    const html = readFileSync(new URL('../renderer/index.html', import.meta.url), 'utf8');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1];
    expect(meta).toMatch(/connect-src 'self';/);
    expect(meta).not.toMatch(/ws:/);
    // The headless server's page still names its own socket in its header.
    expect(contentSecurityPolicy('ws://127.0.0.1:8080')).toMatch(/connect-src 'self' ws:\/\/127\.0\.0\.1:8080;/);
  });
});
