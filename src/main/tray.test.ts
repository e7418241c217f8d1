import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { GatewayOverview } from '../shared/api';
import { TrayPresenter, type TraySurface } from './tray';
import type { MenuAction, MenuItemModel } from './tray-menu';
import type { ShellState } from './tray-state';

const RESOURCES = fileURLToPath(new URL('../../resources/', import.meta.url));

function overview(patch: { deliveries?: Partial<GatewayOverview['deliveries']> } & Partial<Omit<GatewayOverview, 'deliveries'>> = {}): GatewayOverview {
  const deliveries = { pending: 0, attempting: 0, failed: 0, failedPermanently: 0, abandoned: 0, discarded: 0, deliveredLastDay: 4, ...patch.deliveries };
  return {
    state: 'running',
    turnsRunning: 0,
    platforms: [{ name: 'local', state: 'connected', error: null }],
    ledger: { ok: true, failures: 0, lastError: null, lastFailureAt: null },
    lastSweep: null,
    configError: null,
    ...patch,
    deliveries: { ...deliveries, owed: deliveries.pending + deliveries.attempting + deliveries.failed },
  };
}

function state(patch: Partial<ShellState> = {}): ShellState {
  return {
    gateway: { state: 'running', crashes: 0 },
    overview: overview(),
    paused: false,
    autostart: false,
    secretsUnencrypted: false,
    ...patch,
  };
}

/** Records every call the presenter makes on the Electron surface. */
function fakeTray(platform: NodeJS.Platform = 'linux') {
  const calls: { image?: string; tooltip?: string; title?: string; badge?: number; menu?: readonly MenuItemModel[] } = {};
  let menuSets = 0;
  const clicked: MenuAction[] = [];
  let onAction: ((action: MenuAction) => void) | undefined;
  const surface: TraySurface = {
    setImage: (path) => (calls.image = path),
    setToolTip: (text) => (calls.tooltip = text),
    setTitle: (title) => (calls.title = title),
    setMenu: (items, handler) => {
      calls.menu = items;
      onAction = handler;
      menuSets++;
    },
    setBadgeCount: (count) => (calls.badge = count),
  };
  const presenter = new TrayPresenter({ surface, resourcesDir: RESOURCES, platform, onAction: (action) => clicked.push(action) });
  const item = (action: MenuAction) => calls.menu?.find((entry) => (entry.type === 'action' || entry.type === 'checkbox') && entry.action === action);
  return {
    presenter,
    calls,
    clicked,
    menuSets: () => menuSets,
    /** Clicks the menu's item for `action`, as a user can: only if the menu has it, enabled. */
    click: (action: MenuAction) => {
      const entry = item(action);
      if (!entry || (entry.type === 'action' && !entry.enabled)) throw new Error(`the menu has no enabled ${action} item`);
      onAction?.(action);
    },
    image: () => basename(calls.image ?? ''),
    labels: () => (calls.menu ?? []).map((entry) => (entry.type === 'separator' ? '---' : entry.label)),
    item,
  };
}

describe('the tray icon and tooltip', () => {
  it('shows all delivered when nothing is owed', () => {
    const tray = fakeTray();
    tray.presenter.render(state());
    expect(tray.image()).toBe('tray-idle.png');
    expect(tray.calls.tooltip).toBe('Homing: All replies delivered\n0 owed, 4 delivered in the last day');
    expect(tray.calls.badge).toBe(0);
  });

  it('shows the agent working while a turn runs or a reply is being sent', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ overview: overview({ turnsRunning: 2 }) }));
    expect(tray.image()).toBe('tray-working.png');
    expect(tray.calls.tooltip?.split('\n')[0]).toBe('Homing: Agent working (2 turns)');
    tray.presenter.render(state({ overview: overview({ deliveries: { attempting: 1 } }) }));
    expect(tray.image()).toBe('tray-working.png');
    expect(tray.calls.tooltip?.split('\n')[0]).toBe('Homing: Sending a reply');
  });

  it.each([
    [1, 'tray-owed-1.png', '1'],
    [5, 'tray-owed-5.png', '5'],
    [9, 'tray-owed-9.png', '9'],
    [10, 'tray-owed-9plus.png', '9+'],
    [250, 'tray-owed-9plus.png', '9+'],
  ])('shows %i owed replies as %s (title %s on macOS)', (owed, image, title) => {
    const linux = fakeTray('linux');
    linux.presenter.render(state({ overview: overview({ deliveries: { pending: owed - 1, failed: 1 } }) }));
    expect(linux.image()).toBe(image);
    expect(linux.calls.tooltip).toBe(`Homing: ${owed === 1 ? '1 reply' : `${owed} replies`} owed\n${owed} owed, 1 retrying, 4 delivered in the last day`);
    expect(linux.calls.badge).toBe(owed);
    expect(linux.calls.title).toBeUndefined();

    const mac = fakeTray('darwin');
    mac.presenter.render(state({ overview: overview({ deliveries: { pending: owed } }) }));
    expect(mac.image()).toBe('tray-owedTemplate.png');
    expect(mac.calls.title).toBe(title);
  });

  it('asks for attention when a reply failed for good, was abandoned, a login failed or the ledger fails', () => {
    const cases: [GatewayOverview, string][] = [
      [overview({ deliveries: { failedPermanently: 1 } }), '1 reply needs you'],
      [overview({ deliveries: { abandoned: 3 } }), '3 replies given up'],
      [overview({ platforms: [{ name: 'irc', state: 'auth-failed', error: 'bad password' }] }), 'irc: login failed'],
      [overview({ ledger: { ok: false, failures: 2, lastError: 'disk full', lastFailureAt: 1 } }), 'The delivery ledger is failing'],
    ];
    for (const [view, reason] of cases) {
      const tray = fakeTray();
      tray.presenter.render(state({ overview: view }));
      expect(tray.image(), reason).toBe('tray-attention.png');
      expect(tray.calls.tooltip?.split('\n')).toContain(reason);
    }
  });

  it('shows the gateway process starting, restarting after a crash, and stopped after repeated crashes', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ gateway: { state: 'starting', crashes: 0 }, overview: undefined }));
    expect(tray.image()).toBe('tray-off.png');
    expect(tray.calls.tooltip).toBe('Homing: Gateway starting');

    tray.presenter.render(state({ gateway: { state: 'restarting', crashes: 2, restartInMs: 1000 } }));
    expect(tray.image()).toBe('tray-off.png');
    expect(tray.calls.tooltip).toBe('Homing: Gateway restarting in 1 s after 2 crashes');

    tray.presenter.render(state({ gateway: { state: 'failed', crashes: 5 } }));
    expect(tray.image()).toBe('tray-attention.png');
    expect(tray.calls.tooltip).toBe('Homing: Gateway stopped after 5 crashes');
  });

  it('shows paused with the off icon', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ paused: true }));
    expect(tray.image()).toBe('tray-off.png');
    expect(tray.calls.tooltip).toBe('Homing: Paused: chat platforms disconnected\n0 owed, 4 delivered in the last day\nPaused');
  });

  it('uses only icon files that exist, at 1x and 2x', () => {
    const names = new Set<string>();
    const variants: ShellState[] = [
      state(),
      state({ overview: overview({ turnsRunning: 1 }) }),
      state({ overview: overview({ deliveries: { failedPermanently: 1 } }) }),
      state({ gateway: { state: 'starting', crashes: 0 } }),
      ...Array.from({ length: 11 }, (_, i) => state({ overview: overview({ deliveries: { pending: i + 1 } }) })),
    ];
    for (const platform of ['linux', 'darwin'] as const) {
      for (const variant of variants) {
        const tray = fakeTray(platform);
        tray.presenter.render(variant);
        names.add(tray.image());
      }
    }
    expect(names.size).toBe(19);
    for (const name of names) {
      expect(existsSync(join(RESOURCES, name)), name).toBe(true);
      expect(existsSync(join(RESOURCES, name.replace(/\.png$/, '@2x.png'))), name).toBe(true);
    }
  });
});

describe('the tray menu', () => {
  const base = ['Open Homing', 'Sweep now', 'Pause gateway', '---', 'Start at login', 'Open data folder', 'Open logs', '---', 'Quit Homing'];

  it('offers the everyday actions when all is delivered', () => {
    const tray = fakeTray();
    tray.presenter.render(state());
    expect(tray.labels()).toEqual(['All replies delivered', '---', ...base]);
    expect(tray.item('sweep')).toMatchObject({ enabled: true });
    expect(tray.item('autostart')).toMatchObject({ type: 'checkbox', checked: false });
  });

  it('offers the owed replies, which open Deliveries', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ overview: overview({ deliveries: { pending: 3 } }) }));
    expect(tray.labels()).toEqual(['3 replies owed', '---', 'Open Homing', '3 replies owed', ...base.slice(1)]);
    tray.click('deliveries');
    expect(tray.clicked).toEqual(['deliveries']);
  });

  it('lists what needs attention and offers Deliveries for failed replies', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ overview: overview({ deliveries: { failedPermanently: 2 } }) }));
    expect(tray.labels()).toEqual(['Needs attention', '2 replies need you', '---', 'Open Homing', 'Show deliveries', ...base.slice(1)]);
  });

  it('offers Resume when paused', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ paused: true, autostart: true }));
    expect(tray.labels()).toContain('Resume gateway');
    expect(tray.labels()).not.toContain('Pause gateway');
    expect(tray.item('autostart')).toMatchObject({ checked: true });
  });

  it('disables the gateway actions while it starts or restarts', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ gateway: { state: 'restarting', crashes: 1, restartInMs: 500 } }));
    expect(tray.item('sweep')).toMatchObject({ enabled: false });
    expect(tray.item('pause')).toMatchObject({ enabled: false });
    expect(tray.item('restart-gateway')).toBeUndefined();
    expect(tray.item('open')).toMatchObject({ enabled: true });
  });

  it('offers Restart gateway once it stopped after repeated crashes', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ gateway: { state: 'failed', crashes: 5 } }));
    expect(tray.labels()).toEqual([
      'Gateway stopped after 5 crashes',
      '---',
      'Open Homing',
      'Sweep now',
      'Pause gateway',
      'Restart gateway',
      ...base.slice(3),
    ]);
    expect(tray.item('restart-gateway')).toMatchObject({ enabled: true });
  });

  it('warns in the menu when secrets are stored without encryption', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ secretsUnencrypted: true }));
    expect(tray.labels().slice(0, 2)).toEqual(['All replies delivered', 'Secrets are stored without encryption']);
  });

  it('offers Restart to update once an update is downloaded', () => {
    const tray = fakeTray();
    tray.presenter.render(state({ updateReady: '0.2.0' }));
    expect(tray.labels()).toEqual(['All replies delivered', '---', ...base.slice(0, -1), 'Restart to update to v0.2.0', 'Quit Homing']);
    tray.click('install-update');
    expect(tray.clicked).toEqual(['install-update']);
  });

  it('is rebuilt only when its model changes', () => {
    const tray = fakeTray();
    tray.presenter.render(state());
    tray.presenter.render(state());
    expect(tray.menuSets()).toBe(1);
    tray.presenter.render(state({ paused: true }));
    expect(tray.menuSets()).toBe(2);
  });
});
