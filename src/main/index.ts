/**
 * The Electron shell: it only wires real Electron objects into the shell's
 * modules, each of which takes the small part of Electron it uses and is tested
 * under plain Node (tray*.ts, gateway-control.ts, power.ts, notifications.ts,
 * autostart.ts, window-state.ts, ipc.ts, security.ts, logging.ts,
 * safe-secrets.ts). It holds no gateway logic: the core runs in a
 * utilityProcess (gateway-host.ts), supervised and restarted after a crash, and
 * the main process is one more client of its API, over a MessagePort of its own.
 */
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  app,
  BrowserWindow,
  ipcMain,
  Menu,
  nativeImage,
  net,
  Notification,
  powerMonitor,
  safeStorage,
  screen,
  session,
  shell,
  Tray,
  type MenuItemConstructorOptions,
  type MessagePortMain,
} from 'electron';
import { ApiClient } from '../shared/api-client';
import type { UpdateNotice } from '../shared/api';
import { configHome, resolveDataDir } from './gateway/data-dir';
import { releasePageUrl } from './gateway/updates/release-check';
import type { MessagePipe } from '../shared/protocol';
import { messagePortPipe } from './port-pipe';
import { Autostart, HIDDEN_ARG, launchCommand } from './autostart';
import { GatewayControl } from './gateway-control';
import { startGatewayProcess, type GatewayProcessHandle } from './gateway-process';
import { registerShellIpc } from './ipc';
import { createAppLog, logsDir, rendererConsoleLine } from './logging';
import { Notifier, routeFor } from './notifications';
import { isSecretChange } from './parent-secret-store';
import { PowerWatcher } from './power';
import { chooseSecretsBackend, SafeSecrets } from './safe-secrets';
import { CONTENT_SECURITY_POLICY, denyAllPermissions, guardWebContents, rendererUrlFor, secureWebPreferences } from './security';
import { Supervisor, uncleanStop, type SupervisorStatus } from './supervisor';
import { TrayPresenter } from './tray';
import type { MenuAction, MenuItemModel } from './tray-menu';
import type { ShellState } from './tray-state';
import { autoUpdateOf, UpdateController, type Updater } from './updates/update-controller';
import { initialBounds, loadWindowState, MIN_SIZE, trackWindowState, windowStateFile } from './window-state';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const RESOURCES = app.isPackaged ? join(process.resourcesPath, 'resources') : join(HERE, '../../resources');
const rendererUrl = rendererUrlFor(app.isPackaged, process.env, pathToFileURL(join(HERE, '../renderer/index.html')).href);

let window: BrowserWindow | undefined;
let gateway: GatewayProcessHandle | undefined;
/** Builds the window (set once the app is ready). */
let windowFactory: (() => BrowserWindow) | undefined;
let quitting = false;
let stoppedGateway = false;

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  // A second launch focuses the window of the first.
  app.on('second-instance', () => showWindow());
  void app.whenReady().then(onReady);
}

function onReady(): void {
  // HOMING_DATA_DIR is read as the headless gateway reads it (a relative path resolved the same way).
  const dataDir = process.env.HOMING_DATA_DIR ? resolveDataDir(undefined) : app.getPath('userData');
  const appLog = createAppLog(dataDir);
  const log = appLog.logger;
  log.info('Homing starting', { version: app.getVersion(), platform: process.platform });

  // Secrets: safeStorage where a keyring encrypts; the gateway's 0600 file otherwise, with a warning.
  const backend = chooseSecretsBackend(safeStorage, process.platform);
  const safeSecrets = backend.kind === 'safe-storage' ? new SafeSecrets(dataDir, safeStorage, (line) => log.warn(line)) : undefined;
  if (backend.kind === 'file') log.warn(`secrets are stored without encryption: ${backend.reason}`);

  const state: { -readonly [K in keyof ShellState]: ShellState[K] } = {
    gateway: { state: 'idle', crashes: 0 },
    overview: undefined,
    paused: false,
    autostart: false,
    secretsUnencrypted: backend.kind === 'file',
    updateReady: undefined,
  };

  const client = new ApiClient({ callTimeoutMs: 10_000 });
  /** The update the window is told of (through the gateway's overview), kept for a restarted gateway. */
  let updateNotice: UpdateNotice | null = null;

  const autostart = new Autostart({
    platform: process.platform,
    configHome: configHome(),
    command: launchCommand(process.execPath, process.env, process.defaultApp === true, app.getAppPath()),
    loginItems: app,
  });
  state.autostart = autostart.isEnabled();

  const control = new GatewayControl({
    link: { api: client.api, post: (message) => gateway?.post(message) },
    onPausedChange: (paused) => {
      state.paused = paused;
      render();
    },
    onShutdown: () => void quitGracefully(),
    log: (line) => log.info(line),
  });

  const supervisor = new Supervisor({
    start: () => {
      gateway = startGatewayProcess({
        dataDir,
        log: (stream, line) => appLog.gatewayLine(stream, line),
        ...(safeSecrets ? { secrets: safeSecrets.load() } : {}),
        onMessage: (message) => {
          if (safeSecrets && isSecretChange(message)) safeSecrets.change(message.name, message.value);
        },
      });
      client.attach(portPipe(gateway.openChannel()));
      // A restarted gateway forgets the update its window showed: tell it again.
      if (updateNotice) gateway.post({ type: 'update', update: updateNotice });
      // A restarted gateway needs a fresh channel to the open window.
      if (window) sendPort(window);
      void control.gatewayStarted();
      scheduleRefresh();
      return gateway;
    },
    onStatus: (status: SupervisorStatus) => {
      const exit = status.lastExit;
      if (status.state === 'restarting' || status.state === 'failed') {
        log.error(`gateway ${status.state}`, { crashes: status.crashes, code: exit?.code ?? null, signal: exit?.signal ?? null, error: exit?.error });
      } else {
        log.info(`gateway ${status.state}`);
      }
      state.gateway = { state: status.state, crashes: status.crashes, restartInMs: status.restartInMs };
      if (status.state !== 'running') state.overview = undefined;
      render();
    },
  });

  // Updates: only a packaged app has a release feed (electron-builder writes its
  // app-update.yml); electron-updater is loaded at the first check, and not at
  // all with `autoUpdate: false` (updates/update-controller.ts).
  const updatesWanted = app.isPackaged && process.env.HOMING_NO_UPDATE_CHECK !== '1';
  const updates = new UpdateController({
    load: loadAutoUpdater,
    stopGateway: async () => {
      const exit = await supervisor.stop();
      stoppedGateway = true;
      const unclean = uncleanStop(exit);
      if (unclean) throw new Error(unclean);
    },
    announce: (news) => {
      updateNotice = news && { version: news.version, url: releasePageUrl(news.version), ready: news.downloaded };
      state.updateReady = updates.ready;
      render();
      gateway?.post({ type: 'update', update: updateNotice });
      if (news?.downloaded) notifyUpdateReady(news.version);
    },
    log,
  });
  /** `autoUpdate` as the gateway's configuration in force says: read when the gateway comes up and at every config change. */
  async function followAutoUpdate(): Promise<void> {
    if (!updatesWanted) return;
    const result = await client.api.getConfig();
    if (result.ok) updates.setEnabled(autoUpdateOf(result.value));
  }

  // The tray: coloured state icons on Linux and Windows, template images and a title on macOS.
  const tray = new Tray(nativeImage.createFromPath(join(RESOURCES, process.platform === 'darwin' ? 'tray-offTemplate.png' : 'tray-off.png')));
  const presenter = new TrayPresenter({
    resourcesDir: RESOURCES,
    platform: process.platform,
    onAction: (action, checked) => void onMenuAction(action, checked),
    surface: {
      setImage: (path) => tray.setImage(nativeImage.createFromPath(path)),
      setToolTip: (text) => tray.setToolTip(text),
      setTitle: (title) => tray.setTitle(title),
      setMenu: (items, onAction) => tray.setContextMenu(Menu.buildFromTemplate(items.map((item) => menuItem(item, onAction)))),
      setBadgeCount: (count) => void app.setBadgeCount(count),
    },
  });
  function render(): void {
    presenter.render(state);
  }
  // Linux: a click may never arrive on some desktops, so the context menu carries everything.
  tray.on('click', () => showWindow());

  async function onMenuAction(action: MenuAction, checked?: boolean): Promise<void> {
    switch (action) {
      case 'open':
        return showWindow();
      case 'deliveries':
        return navigate('#/deliveries');
      case 'sweep':
        return control.sweepNow();
      case 'pause':
        return control.setPausedByUser(true);
      case 'resume':
        return control.setPausedByUser(false);
      case 'restart-gateway':
        return supervisor.start();
      case 'autostart':
        autostart.setEnabled(checked === true);
        state.autostart = autostart.isEnabled();
        return render();
      case 'data-folder':
        return void (await shell.openPath(dataDir));
      case 'logs':
        return void (await shell.openPath(logsDir(dataDir)));
      case 'install-update':
        return quitGracefully(true);
      case 'quit':
        return quitGracefully();
    }
  }

  // The overview drives the tray: refreshed after events (debounced: a delivery
  // changes once per chunk) and every 30 s in case an event was missed.
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  function scheduleRefresh(): void {
    if (refreshTimer) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = undefined;
      void client.api.getOverview().then((result) => {
        if (result.ok) {
          const cameUp = state.overview === undefined;
          state.overview = result.value;
          render();
          if (cameUp) void followAutoUpdate();
        }
      });
    }, 250);
  }
  setInterval(scheduleRefresh, 30_000).unref();

  const notifier = new Notifier({
    surface: {
      isSupported: () => Notification.isSupported(),
      show: (model, onClick) => {
        const notification = new Notification({ title: model.title, body: model.body, silent: false });
        notification.on('click', onClick);
        notification.show();
      },
    },
    open: (target) => navigate(routeFor(target)),
  });
  client.api.subscribe((event) => {
    notifier.handle(event);
    if (event.type === 'config.changed') void followAutoUpdate();
    if (event.type !== 'turn.token') scheduleRefresh();
  });

  function notifyUpdateReady(version: string): void {
    if (!Notification.isSupported()) return;
    const notification = new Notification({
      title: `Homing ${version} is ready`,
      body: 'It is installed when Homing restarts: Restart to update in the tray menu, or the next time you quit.',
    });
    notification.on('click', () => showWindow());
    notification.show();
  }

  registerShellIpc(ipcMain, {
    rendererUrl,
    handlers: {
      requestPort: (sender) => {
        const target = BrowserWindow.fromWebContents(sender);
        if (target) sendPort(target);
      },
    },
    onRefused: (channel) => log.warn('refused an IPC message from an untrusted frame', { channel }),
  });

  denyAllPermissions(session.defaultSession);
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] };
    callback({ responseHeaders: headers });
  });

  const power = new PowerWatcher({ power: powerMonitor, net, actions: control });
  power.start();

  app.on('before-quit', (event) => {
    quitting = true;
    if (stoppedGateway) return;
    // Stop the gateway gracefully first: running turns and sends get their deadline.
    event.preventDefault();
    void quitGracefully();
  });

  let quittingPromise: Promise<void> | undefined;
  /** Stops the gateway, then quits; a downloaded update is installed only after a clean stop (`restart`: start again after). */
  function quitGracefully(restart = false): Promise<void> {
    quittingPromise ??= (async () => {
      quitting = true;
      power.stop();
      const outcome = await updates.quit(restart);
      stoppedGateway = true;
      log.info(outcome === 'installing' ? 'Homing quit to install an update' : 'Homing quit');
      tray.destroy();
      if (outcome === 'installing') {
        // quitAndInstall quits by itself; should the installer fail to start, it does not: quit anyway.
        setTimeout(() => app.quit(), 10_000);
        return;
      }
      if (restart) app.relaunch();
      app.quit();
    })();
    return quittingPromise;
  }

  // The Playwright test reads the tray's menu model and clicks it (there is no OS API to read a tray menu).
  if (process.env.HOMING_TEST_HOOKS === '1') {
    (globalThis as { homingShell?: unknown }).homingShell = {
      trayMenu: (): readonly MenuItemModel[] => presenter.current().menu,
      trayImage: () => presenter.current().view?.image,
      click: (action: MenuAction) => void onMenuAction(action),
    };
  }

  windowFactory = () => {
    const created = createWindow(dataDir, (line) => log.warn(line));
    if (backend.kind === 'file') {
      // The visible warning: in the window's title bar (the page's own title is
      // kept out), and as a line in the tray menu.
      created.on('page-title-updated', (event) => event.preventDefault());
      created.setTitle(`Homing — secrets stored without encryption (${backend.reason})`);
    }
    return created;
  };

  render();
  supervisor.start();
  // Started at login with --hidden: only the tray until the user opens the window.
  if (!process.argv.includes(HIDDEN_ARG)) showWindow();
}

/** electron-updater's autoUpdater. A CommonJS module: under ESM its exports are the namespace's `default`. */
async function loadAutoUpdater(): Promise<Updater> {
  const loaded = (await import('electron-updater')) as typeof import('electron-updater') & { default?: typeof import('electron-updater') };
  return (loaded.default ?? loaded).autoUpdater;
}

function menuItem(item: MenuItemModel, onAction: (action: MenuAction, checked?: boolean) => void): MenuItemConstructorOptions {
  switch (item.type) {
    case 'separator':
      return { type: 'separator' };
    case 'info':
      return { label: item.label, enabled: false };
    case 'action':
      return { label: item.label, enabled: item.enabled, click: () => onAction(item.action) };
    case 'checkbox':
      return { label: item.label, type: 'checkbox', checked: item.checked, click: (menuItem) => onAction(item.action, menuItem.checked) };
  }
}

function portPipe(port: MessagePortMain): MessagePipe {
  const pipe = messagePortPipe(port);
  port.start();
  return pipe;
}

function sendPort(target: BrowserWindow): void {
  if (!gateway) return;
  target.webContents.postMessage('homing:port', null, [gateway.openChannel()]);
}

function showWindow(): void {
  if (window) {
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
    return;
  }
  if (!windowFactory) return;
  window = windowFactory();
}

/** Opens the window at a route of the page (hash routing: `#/deliveries`, `#/deliveries/<id>`). */
function navigate(hash: string): void {
  const existed = window !== undefined && !window.webContents.isLoading();
  showWindow();
  if (!window) return;
  // The hash is built by routeFor from a fixed set of shapes; JSON.stringify quotes it safely.
  const script = `location.hash = ${JSON.stringify(hash)}`;
  if (existed) void window.webContents.executeJavaScript(script);
  else window.webContents.once('did-finish-load', () => void window?.webContents.executeJavaScript(script));
}

function createWindow(dataDir: string, warn: (line: string) => void): BrowserWindow {
  const stateFile = windowStateFile(dataDir);
  const saved = loadWindowState(stateFile);
  const created = new BrowserWindow({
    ...initialBounds(
      saved,
      screen.getAllDisplays().map((display) => display.workArea),
    ),
    minWidth: MIN_SIZE.width,
    minHeight: MIN_SIZE.height,
    show: false,
    title: 'Homing',
    icon: join(RESOURCES, 'icon.png'),
    webPreferences: secureWebPreferences(join(HERE, '../preload/index.cjs')),
  });
  if (saved?.maximized) created.maximize();
  trackWindowState(created, stateFile);
  created.once('ready-to-show', () => created.show());
  // Closing hides to the tray; Quit in the tray menu ends the app.
  created.on('close', (event) => {
    if (!quitting) {
      event.preventDefault();
      created.hide();
    }
  });
  created.on('closed', () => {
    if (window === created) window = undefined;
  });
  // Renderer errors reach the app's log from here; the page gets no logging IPC.
  created.webContents.on('console-message', (event) => {
    const line = rendererConsoleLine(event.level, event.message, event.sourceId, event.lineNumber);
    if (line) warn(line);
  });
  created.webContents.on('render-process-gone', (_event, details) => warn(`[renderer] process gone: ${details.reason} (${details.exitCode})`));
  created.webContents.on('preload-error', (_event, _path, error) => warn(`[renderer] preload failed: ${error.message}`));
  void created.loadURL(rendererUrl);
  return created;
}

// Every web contents, whatever creates it: no navigation, no webviews, no new
// windows; http(s) links the user clicks open in the browser.
app.on('web-contents-created', (_event, contents) => {
  guardWebContents(contents, {
    openExternal: (url) => void shell.openExternal(url),
    focused: () => BrowserWindow.getFocusedWindow() !== null,
  });
});

// The tray keeps running with every window closed.
app.on('window-all-closed', () => {});
