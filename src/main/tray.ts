/**
 * Draws the shell's state on the tray through a small surface (`TraySurface`),
 * which index.ts backs with Electron's Tray, Menu and app.setBadgeCount.
 * Linux and Windows get coloured images with the count drawn in; macOS gets
 * template images (so the menu bar tints them) and the count as the title.
 */
import { join } from 'node:path';
import { trayMenu, type MenuAction, type MenuItemModel } from './tray-menu';
import { trayView, type ShellState, type TrayView } from './tray-state';

/** The part of Electron's Tray (and app badge) the tray uses. */
export interface TraySurface {
  setImage(path: string): void;
  setToolTip(text: string): void;
  /** macOS only. */
  setTitle(title: string): void;
  /** Replaces the context menu; `onAction` runs when an item is clicked. */
  setMenu(items: readonly MenuItemModel[], onAction: (action: MenuAction, checked?: boolean) => void): void;
  /** app.setBadgeCount (macOS dock, Linux Unity launchers); a no-op where unsupported. */
  setBadgeCount(count: number): void;
}

export interface TrayPresenterOptions {
  readonly surface: TraySurface;
  readonly resourcesDir: string;
  readonly platform: NodeJS.Platform;
  readonly onAction: (action: MenuAction, checked?: boolean) => void;
}

export class TrayPresenter {
  private last: { image: string; tooltip: string; title: string; badge: number; menu: string } | undefined;
  private view: TrayView | undefined;
  private menu: MenuItemModel[] = [];

  constructor(private readonly options: TrayPresenterOptions) {}

  /** Redraws what changed; the menu is rebuilt whenever its model differs. */
  render(state: ShellState): void {
    const view = trayView(state);
    const menu = trayMenu(state, view);
    const mac = this.options.platform === 'darwin';
    const next = {
      image: join(this.options.resourcesDir, mac ? view.templateImage : view.image),
      tooltip: view.tooltip,
      title: mac ? view.title : '',
      badge: view.badgeCount,
      menu: JSON.stringify(menu),
    };
    const { surface } = this.options;
    if (next.image !== this.last?.image) surface.setImage(next.image);
    if (next.tooltip !== this.last?.tooltip) surface.setToolTip(next.tooltip);
    if (mac && next.title !== this.last?.title) surface.setTitle(next.title);
    if (next.badge !== this.last?.badge) surface.setBadgeCount(next.badge);
    if (next.menu !== this.last?.menu) surface.setMenu(menu, this.options.onAction);
    this.last = next;
    this.view = view;
    this.menu = menu;
  }

  /** The current view and menu model (for tests and the e2e hook). */
  current(): { view: TrayView | undefined; menu: readonly MenuItemModel[] } {
    return { view: this.view, menu: this.menu };
  }
}
