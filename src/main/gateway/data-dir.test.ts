import { describe, expect, it } from 'vitest';
import { defaultDataDir, resolveDataDir } from './data-dir';

describe('the data directory', () => {
  it("is the one Electron's userData gives the tray app, per platform", () => {
    expect(defaultDataDir({}, 'linux', '/home/ada')).toBe('/home/ada/.config/Homing');
    expect(defaultDataDir({ XDG_CONFIG_HOME: '/xdg' }, 'linux', '/home/ada')).toBe('/xdg/Homing');
    expect(defaultDataDir({ XDG_CONFIG_HOME: 'relative' }, 'linux', '/home/ada')).toBe('/home/ada/.config/Homing');
    expect(defaultDataDir({}, 'darwin', '/Users/ada')).toBe('/Users/ada/Library/Application Support/Homing');
  });

  it('prefers --data-dir, then HOMING_DATA_DIR', () => {
    expect(resolveDataDir('/flag', { HOMING_DATA_DIR: '/env' })).toBe('/flag');
    expect(resolveDataDir(undefined, { HOMING_DATA_DIR: '/env' })).toBe('/env');
    expect(resolveDataDir(undefined, { HOMING_DATA_DIR: '', XDG_CONFIG_HOME: '/xdg' })).toMatch(/Homing$/);
  });
});
