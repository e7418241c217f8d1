import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Autostart, desktopEntry, launchCommand, type LoginItemSurface } from './autostart';

let configHome: string;
beforeEach(() => {
  configHome = mkdtempSync(join(tmpdir(), 'homing-autostart-'));
});
afterEach(() => rmSync(configHome, { recursive: true, force: true }));

function fakeLoginItems(): LoginItemSurface & { settings: { openAtLogin: boolean; openAsHidden?: boolean; args?: string[] } } {
  const surface = {
    settings: { openAtLogin: false } as { openAtLogin: boolean; openAsHidden?: boolean; args?: string[] },
    getLoginItemSettings: () => ({ openAtLogin: surface.settings.openAtLogin }),
    setLoginItemSettings: (settings: { openAtLogin: boolean; openAsHidden?: boolean; args?: string[] }) => {
      surface.settings = settings;
    },
  };
  return surface;
}

describe('the XDG autostart entry (Linux)', () => {
  it('has the content the Desktop Entry spec asks for', () => {
    expect(desktopEntry(['/opt/Homing/homing'])).toBe(
      [
        '[Desktop Entry]',
        'Type=Application',
        'Name=Homing',
        'Comment=Your local agent on the chat platforms you use; no reply lost',
        'Exec=/opt/Homing/homing --hidden',
        'Icon=homing',
        'Terminal=false',
        'X-GNOME-Autostart-enabled=true',
        '',
      ].join('\n'),
    );
  });

  it('quotes paths with spaces and escapes what Exec reserves', () => {
    const exec = desktopEntry(['/home/me/Apps/Homing 0.1.AppImage', '100%']).split('\n').find((line) => line.startsWith('Exec='));
    expect(exec).toBe('Exec="/home/me/Apps/Homing 0.1.AppImage" 100%% --hidden');
    const odd = desktopEntry(['/tmp/a"b$c']).split('\n').find((line) => line.startsWith('Exec='));
    expect(odd).toBe('Exec="/tmp/a\\"b\\$c" --hidden');
  });

  it('is written to ~/.config/autostart when enabled and removed when disabled', () => {
    const autostart = new Autostart({ platform: 'linux', configHome, command: ['/usr/bin/homing'], loginItems: fakeLoginItems() });
    expect(autostart.isEnabled()).toBe(false);
    autostart.setEnabled(true);
    const file = join(configHome, 'autostart', 'homing.desktop');
    expect(readFileSync(file, 'utf8')).toContain('Exec=/usr/bin/homing --hidden\n');
    expect(autostart.isEnabled()).toBe(true);
    autostart.setEnabled(false);
    expect(existsSync(file)).toBe(false);
    expect(autostart.isEnabled()).toBe(false);
  });

  it('counts an entry the desktop switched off as disabled', () => {
    const autostart = new Autostart({ platform: 'linux', configHome, command: ['/usr/bin/homing'], loginItems: fakeLoginItems() });
    autostart.setEnabled(true);
    const file = join(configHome, 'autostart', 'homing.desktop');
    writeFileSync(file, readFileSync(file, 'utf8').replace('X-GNOME-Autostart-enabled=true', 'X-GNOME-Autostart-enabled=false'));
    expect(autostart.isEnabled()).toBe(false);
  });

  it('starts the AppImage itself, not its temporary mount', () => {
    expect(launchCommand('/tmp/.mount_Homing/homing', { APPIMAGE: '/home/me/Homing.AppImage' }, false, '/x')).toEqual(['/home/me/Homing.AppImage']);
    expect(launchCommand('/usr/lib/electron/electron', {}, true, '/src/homing')).toEqual(['/usr/lib/electron/electron', '/src/homing']);
    expect(launchCommand('/opt/Homing/homing', {}, false, '/opt/Homing/resources/app.asar')).toEqual(['/opt/Homing/homing']);
  });
});

describe('the login item (macOS, Windows)', () => {
  it.each(['darwin', 'win32'] as const)('uses the login item settings on %s, starting hidden', (platform) => {
    const loginItems = fakeLoginItems();
    const autostart = new Autostart({ platform, configHome, command: ['x'], loginItems });
    autostart.setEnabled(true);
    expect(loginItems.settings).toEqual({ openAtLogin: true, openAsHidden: true, args: ['--hidden'] });
    expect(autostart.isEnabled()).toBe(true);
    expect(existsSync(join(configHome, 'autostart'))).toBe(false);
  });
});
