/**
 * The Electron shell: single instance, the tray, one window, and the gateway
 * process's life. It holds no gateway logic: the core runs in a utilityProcess
 * (gateway-host.ts), supervised and restarted after a crash.
 */
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { app, BrowserWindow, ipcMain, Menu, nativeImage, session, Tray } from 'electron';
import log from 'electron-log/main';
import { startGatewayProcess, type GatewayProcessHandle } from './gateway-process';
import { isTrustedRendererUrl, secureWebPreferences } from './security';
import { Supervisor } from './supervisor';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const RESOURCES = join(HERE, '../../resources');
const rendererUrl = process.env.ELECTRON_RENDERER_URL ?? pathToFileURL(join(HERE, '../renderer/index.html')).href;

let window: BrowserWindow | undefined;
let tray: Tray | undefined;
let gateway: GatewayProcessHandle | undefined;
let quitting = false;

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => showWindow());
  void app.whenReady().then(onReady);
}

function onReady(): void {
  const dataDir = process.env.HOMING_DATA_DIR || app.getPath('userData');
  log.transports.file.resolvePathFn = () => join(dataDir, 'logs', 'main.log');
  log.initialize();

  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));

  const supervisor = new Supervisor({
    start: () => {
      gateway = startGatewayProcess({ dataDir, log: (level, line) => log[level](`[gateway] ${line}`) });
      // A restarted gateway needs a fresh channel to the open window.
      if (window) sendPort(window);
      return gateway;
    },
    onStatus: (status) => log.info(`gateway ${status.state}`, status.pid ?? ''),
  });
  supervisor.start();

  ipcMain.on('homing:request-port', (event) => {
    if (!isTrustedRendererUrl(event.senderFrame?.url, rendererUrl)) {
      log.warn('refused an IPC request from an untrusted frame');
      return;
    }
    const target = BrowserWindow.fromWebContents(event.sender);
    if (target) sendPort(target);
  });

  tray = new Tray(nativeImage.createFromPath(join(RESOURCES, 'tray.png')));
  tray.setToolTip('Homing');
  tray.setContextMenu(
    Menu.buildFromTemplate([
      { label: 'Open Homing', click: () => showWindow() },
      { type: 'separator' },
      { label: 'Quit', click: () => void quit(supervisor) },
    ]),
  );
  tray.on('click', () => showWindow());
  showWindow();
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
  window = new BrowserWindow({
    width: 1000,
    height: 720,
    minWidth: 360,
    show: false,
    title: 'Homing',
    webPreferences: secureWebPreferences(join(HERE, '../preload/index.cjs')),
  });
  window.once('ready-to-show', () => window?.show());
  // Closing hides to the tray; Quit in the tray menu ends the app.
  window.on('close', (event) => {
    if (!quitting) {
      event.preventDefault();
      window?.hide();
    }
  });
  window.on('closed', () => {
    window = undefined;
  });
  void window.loadURL(rendererUrl);
}

app.on('web-contents-created', (_event, contents) => {
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
});

// The tray keeps running with every window closed.
app.on('window-all-closed', () => {});

async function quit(supervisor: Supervisor): Promise<void> {
  quitting = true;
  await supervisor.stop();
  tray?.destroy();
  app.quit();
}
