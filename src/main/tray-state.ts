/**
 * What the tray shows, as a pure function of the shell's state: which icon,
 * which tooltip, which title (macOS) and which badge count. No electron here:
 * `tray.ts` hands the result to the real Tray.
 */
import type { GatewayOverview } from '../shared/api';
import type { SupervisorState } from './supervisor';

/** The gateway process as the supervisor reports it. */
export interface GatewayProcessView {
  readonly state: SupervisorState;
  /** Crashes since the app started. */
  readonly crashes: number;
  /** When `restarting`: the delay before the next start. */
  readonly restartInMs?: number | undefined;
}

/** Everything the tray and its menu are drawn from. */
export interface ShellState {
  readonly gateway: GatewayProcessView;
  /** The gateway's last overview; undefined until it first answers. */
  readonly overview: GatewayOverview | undefined;
  /** The user paused the chat platforms (Pause gateway). */
  readonly paused: boolean;
  /** Start at login is on. */
  readonly autostart: boolean;
  /** Linux offers only safeStorage's plain-text backend: secrets are not encrypted. */
  readonly secretsUnencrypted: boolean;
  /** A downloaded update, installed at the next restart (updates/update-controller.ts): its version. */
  readonly updateReady?: string | undefined;
}

/**
 * The icon's meaning, most urgent first: `attention` (a failure needs the user),
 * `owed` (replies waiting, with the count), `working` (the agent is answering or a
 * reply is being sent), `idle` (all delivered), `off` (the gateway is not running
 * or is paused).
 */
export type TrayKind = 'attention' | 'owed' | 'working' | 'idle' | 'off';

export interface TrayView {
  readonly kind: TrayKind;
  /** Replies still owed (pending + attempting + failed and retried). */
  readonly owed: number;
  /** `resources/` file name for Linux and Windows (coloured, the count drawn in). */
  readonly image: string;
  /** `resources/` file name of the macOS template image (monochrome; the count goes in the title). */
  readonly templateImage: string;
  /** macOS menu-bar title next to the icon: the owed count, or ''. */
  readonly title: string;
  readonly tooltip: string;
  /** For `app.setBadgeCount`: the owed count. */
  readonly badgeCount: number;
  /** One line saying what the state is, for the tooltip and the menu's first line. */
  readonly headline: string;
  /** Why the tray asks for attention, one reason a line. */
  readonly reasons: readonly string[];
}

/** The count as drawn on the icon: 1–9, then 9+. */
export function countLabel(count: number): string {
  if (count <= 0) return '';
  return count > 9 ? '9+' : String(count);
}

export function trayView(state: ShellState): TrayView {
  const overview = state.overview;
  const owed = overview?.deliveries.owed ?? 0;
  const reasons = attentionReasons(state);
  const kind = trayKind(state, reasons);
  const label = countLabel(owed);
  const image = kind === 'owed' ? `tray-owed-${label === '9+' ? '9plus' : label}.png` : `tray-${kind}.png`;
  const headline = headlineFor(state, kind, owed);
  return {
    kind,
    owed,
    image,
    templateImage: `tray-${kind}Template.png`,
    title: label,
    tooltip: tooltipFor(state, headline, reasons),
    badgeCount: owed,
    headline,
    reasons,
  };
}

function trayKind(state: ShellState, reasons: readonly string[]): TrayKind {
  if (state.gateway.state === 'failed') return 'attention';
  if (state.gateway.state !== 'running' || !state.overview || state.overview.state !== 'running') return 'off';
  if (reasons.length > 0) return 'attention';
  if (state.paused) return 'off';
  const { deliveries, turnsRunning } = state.overview;
  // Rows being sent right now are work in progress, not a backlog.
  if (deliveries.owed > deliveries.attempting) return 'owed';
  if (turnsRunning > 0 || deliveries.attempting > 0) return 'working';
  return 'idle';
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** What needs the user. None while the gateway is stopped for good: the headline says so, and the last overview is stale. */
function attentionReasons(state: ShellState): string[] {
  const reasons: string[] = [];
  const overview = state.overview;
  if (!overview || state.gateway.state === 'failed') return reasons;
  const { deliveries } = overview;
  // The window's words (Deliveries: "Needs you", "Given up").
  if (deliveries.failedPermanently > 0) reasons.push(`${plural(deliveries.failedPermanently, 'reply', 'replies')} need${deliveries.failedPermanently === 1 ? 's' : ''} you`);
  if (deliveries.abandoned > 0) reasons.push(`${plural(deliveries.abandoned, 'reply', 'replies')} given up`);
  for (const platform of overview.platforms) {
    if (platform.state === 'auth-failed') reasons.push(`${platform.name}: login failed`);
  }
  if (!overview.ledger.ok) reasons.push('The delivery ledger is failing');
  if (overview.configError) reasons.push('config.json has an error');
  return reasons;
}

function headlineFor(state: ShellState, kind: TrayKind, owed: number): string {
  const gateway = state.gateway;
  switch (gateway.state) {
    case 'idle':
    case 'starting':
      return 'Gateway starting';
    case 'restarting': {
      const delay = gateway.restartInMs !== undefined ? ` in ${Math.max(1, Math.round(gateway.restartInMs / 1000))} s` : '';
      return `Gateway restarting${delay} after ${plural(gateway.crashes, 'crash', 'crashes')}`;
    }
    case 'stopping':
      return 'Gateway stopping';
    case 'stopped':
      return 'Gateway stopped';
    case 'failed':
      return `Gateway stopped after ${plural(gateway.crashes, 'crash', 'crashes')}`;
    case 'running':
      break;
  }
  if (!state.overview || state.overview.state === 'starting') return 'Gateway starting';
  if (state.overview.state !== 'running') return 'Gateway stopping';
  const running = state.overview.turnsRunning;
  switch (kind) {
    case 'attention':
      return 'Needs attention';
    case 'off':
      return 'Paused: chat platforms disconnected';
    case 'owed':
      return `${plural(owed, 'reply', 'replies')} owed`;
    case 'working':
      return running > 0 ? `Agent working (${plural(running, 'turn')})` : 'Sending a reply';
    case 'idle':
      return 'All replies delivered';
  }
}

function tooltipFor(state: ShellState, headline: string, reasons: readonly string[]): string {
  const lines = [`Homing: ${headline}`];
  const overview = state.overview;
  if (overview && state.gateway.state === 'running') {
    const { deliveries } = overview;
    const counts = [`${deliveries.owed} owed`];
    if (deliveries.failed > 0) counts.push(`${deliveries.failed} retrying`);
    counts.push(`${deliveries.deliveredLastDay} delivered in the last day`);
    lines.push(counts.join(', '));
  }
  lines.push(...reasons);
  if (state.paused && state.gateway.state === 'running') lines.push('Paused');
  return lines.join('\n');
}
