import { describe, expect, it } from 'vitest';
import { isTrustedRendererUrl, secureWebPreferences } from './security';

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
