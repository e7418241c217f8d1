/**
 * The tray's context menu as data, rebuilt from the shell's state whenever it
 * changes. Linux needs a context menu always (a click on the icon may never
 * arrive on some desktops), so everything the tray does is in here. `tray.ts`
 * turns the model into an Electron menu; tests read the model.
 */
import { plural, type ShellState, type TrayView } from './tray-state';

export type MenuAction =
  | 'open'
  | 'deliveries'
  | 'sweep'
  | 'pause'
  | 'resume'
  | 'restart-gateway'
  | 'autostart'
  | 'data-folder'
  | 'logs'
  | 'install-update'
  | 'quit';

export type MenuItemModel =
  | { readonly type: 'info'; readonly label: string }
  | { readonly type: 'separator' }
  | { readonly type: 'action'; readonly action: MenuAction; readonly label: string; readonly enabled: boolean }
  | { readonly type: 'checkbox'; readonly action: MenuAction; readonly label: string; readonly checked: boolean };

export function trayMenu(state: ShellState, view: TrayView): MenuItemModel[] {
  const running = state.gateway.state === 'running' && state.overview?.state === 'running';
  const stopped = state.gateway.state === 'failed' || state.gateway.state === 'stopped';
  const items: MenuItemModel[] = [{ type: 'info', label: view.headline }];
  for (const reason of view.reasons) items.push({ type: 'info', label: reason });
  if (state.secretsUnencrypted) items.push({ type: 'info', label: 'Secrets are stored without encryption' });
  items.push({ type: 'separator' }, { type: 'action', action: 'open', label: 'Open Homing', enabled: true });

  if (view.owed > 0) {
    items.push({ type: 'action', action: 'deliveries', label: `${plural(view.owed, 'reply', 'replies')} owed`, enabled: true });
  } else if (running && view.kind === 'attention' && view.reasons.some((reason) => /repl(y|ies)/.test(reason))) {
    items.push({ type: 'action', action: 'deliveries', label: 'Show deliveries', enabled: true });
  }
  items.push({ type: 'action', action: 'sweep', label: 'Sweep now', enabled: running });
  items.push(
    state.paused
      ? { type: 'action', action: 'resume', label: 'Resume gateway', enabled: running }
      : { type: 'action', action: 'pause', label: 'Pause gateway', enabled: running },
  );
  if (stopped) items.push({ type: 'action', action: 'restart-gateway', label: 'Restart gateway', enabled: true });

  items.push(
    { type: 'separator' },
    { type: 'checkbox', action: 'autostart', label: 'Start at login', checked: state.autostart },
    { type: 'action', action: 'data-folder', label: 'Open data folder', enabled: true },
    { type: 'action', action: 'logs', label: 'Open logs', enabled: true },
    { type: 'separator' },
  );
  // Installing waits for the gateway's clean stop, like Quit (it is Quit, then the new version starts).
  if (state.updateReady !== undefined) items.push({ type: 'action', action: 'install-update', label: `Restart to update to v${state.updateReady}`, enabled: true });
  items.push({ type: 'action', action: 'quit', label: 'Quit Homing', enabled: true });
  return items;
}
