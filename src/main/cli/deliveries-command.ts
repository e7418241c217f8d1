import { resolveDataDir } from '../gateway/data-dir';
import { DELIVERY_STATES, type DeliveryFilter, type DeliveryPage, type DeliveryRow, type DeliveryState } from '../../shared/api';
import { PAGE_SIZE } from '../gateway/ledger/operator-actions';
import { dataDirToUse, formatTime, parseCommandArgs, parseCursor, parsePage, UsageError, type CliContext, type Command } from './command';
import { changeLedger, deliveryPolicy, withLedger } from './ledger-access';

const USAGE = `Usage: homing deliveries list [--state STATE] [--after CURSOR] [--json] [--data-dir DIR]
       homing deliveries retry <id> [--data-dir DIR]
       homing deliveries discard <id> [--data-dir DIR]

  list            replies the gateway owes or has sent, newest first
  retry           make a failed or abandoned reply owed again (fresh attempts)
  discard         stop trying to send an owed reply (it becomes abandoned)
  --state STATE   only rows in this state: ${DELIVERY_STATES.join(', ')}; or as the
                  window's tabs: owed (pending, being sent or retrying), given-up
  --after CURSOR  the next page: the cursor the previous page printed (50 per page)
  --page N        page N (slower the deeper it is; --after is the way to walk)
  --json          machine-readable output
  --data-dir DIR  data directory (default: $HOMING_DATA_DIR, else the tray app's)`;

export const deliveriesCommand: Command = {
  name: 'deliveries',
  summary: 'list owed and sent replies; retry or discard one',
  usage: USAGE,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(
      'deliveries',
      args,
      {
        state: { type: 'string' },
        after: { type: 'string' },
        page: { type: 'string' },
        json: { type: 'boolean' },
        'data-dir': { type: 'string' },
      },
      { min: 1, max: 2 },
    );
    const [action, target] = positionals;
    const dataDir = resolveDataDir(values['data-dir'], context.env);
    // Listing, retrying and discarding judge nothing by the rules, so a broken section is only worth a warning here.
    const loaded = deliveryPolicy(dataDir);
    if (!loaded.ok) context.stderr(`homing: ${loaded.error} (using the default delivery rules)`);
    const policy = loaded.ok ? loaded.value : {};
    switch (action) {
      case 'list': {
        if (target !== undefined) throw new UsageError(`deliveries list: unexpected argument "${target}"`);
        const { state, filter } = parseState(values.state);
        const cursor = parseCursor('deliveries list', values.after, values.page);
        const page = parsePage('deliveries list', values.page);
        dataDirToUse('deliveries', values['data-dir'], context.env);
        const query = { ...(cursor ? { cursor } : { page }), ...(state ? { state } : {}), ...(filter ? { filter } : {}) };
        const result: DeliveryPage = withLedger(dataDir, (ledger) => ledger.listDeliveries(query), policy) ?? {
          deliveries: [],
          page,
          pageSize: PAGE_SIZE,
          hasMore: false,
          nextCursor: null,
          total: 0,
        };
        if (values.json) context.stdout(JSON.stringify(result, null, 2));
        else printList(result, values.state, dataDir, context);
        return 0;
      }
      case 'retry':
      case 'discard': {
        if (values.state !== undefined || values.page !== undefined || values.after !== undefined || values.json !== undefined) {
          throw new UsageError(`deliveries ${action}: --state, --after, --page and --json apply to list only`);
        }
        const id = parseId(action, target);
        dataDirToUse('deliveries', values['data-dir'], context.env);
        const outcome = await changeLedger(
          dataDir,
          { method: action === 'retry' ? 'retryDelivery' : 'discardDelivery', params: { id }, read: (row) => ({ ok: true as const, row: row as DeliveryRow }) },
          (ledger) => (action === 'retry' ? ledger.retryDelivery(id) : ledger.discardDelivery(id)),
          policy,
        );
        const result = outcome.value;
        if (!result || !result.ok) throw new Error(result?.message ?? `no delivery with id ${id} in ${dataDir}`);
        context.stdout(
          action === 'retry'
            ? outcome.via === 'gateway'
              ? `Delivery ${id} is owed again (pending, fresh attempts); the running gateway sends it as soon as ${result.row.platform} can take it.`
              : `Delivery ${id} is owed again (pending, fresh attempts). The gateway sends it once it runs and ${result.row.platform} is connected.`
            : `Delivery ${id} is discarded (abandoned); it will not be sent again.`,
        );
        return 0;
      }
      default:
        throw new UsageError(`deliveries: unknown action "${action}"; use list, retry or discard`);
    }
  },
};

/** The window's tabs, by the words the window and the docs use. */
const TABS: Record<string, DeliveryFilter> = { owed: 'owed', 'given-up': 'abandoned' };

function parseState(value: string | undefined): { readonly state?: DeliveryState; readonly filter?: DeliveryFilter } {
  if (value === undefined) return {};
  const tab = TABS[value];
  if (tab) return { filter: tab };
  const state = DELIVERY_STATES.find((candidate) => candidate === value);
  if (!state) throw new UsageError(`deliveries list: --state must be one of ${[...DELIVERY_STATES, ...Object.keys(TABS)].join(', ')}, not "${value}"`);
  return { state };
}

function parseId(action: string, value: string | undefined): string {
  if (value === undefined) throw new UsageError(`deliveries ${action}: which delivery? give its id (see homing deliveries list)`);
  if (!/^[0-9a-f]{24}$/.test(value)) throw new UsageError(`deliveries ${action}: "${value}" is not a delivery id (24 hex characters)`);
  return value;
}

function printList(result: DeliveryPage, state: string | undefined, dataDir: string, context: CliContext): void {
  if (result.deliveries.length === 0) {
    context.stdout(`No deliveries${state ? ` in state ${state}` : ''}${result.page > 1 ? ` on page ${result.page}` : ''} (${dataDir}).`);
    return;
  }
  const header = ['ID', 'STATE', 'PLATFORM', 'CHAT', 'ATTEMPTS', 'CHUNKS', 'UPDATED', 'NOTE'];
  const rows = result.deliveries.map((row) => [
    row.id,
    row.state,
    row.platform,
    row.chatId + (row.threadId ? `/${row.threadId}` : ''),
    String(row.attempts),
    `${row.chunksDelivered}/${row.chunksTotal}`,
    formatTime(row.updatedAt),
    note(row),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  for (const line of [header, ...rows]) {
    context.stdout(line.map((cell, column) => (column === line.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ').trimEnd());
  }
  if (result.nextCursor) context.stdout(`(page ${result.page}; next page: --after ${result.nextCursor})`);
}

function note(row: DeliveryRow): string {
  switch (row.state) {
    case 'abandoned':
      return row.abandonReason ?? '';
    case 'failed':
      return `${row.nextAttemptAt === null ? 'not retried' : `retry at ${new Date(row.nextAttemptAt).toISOString()}`}: ${row.lastError ?? ''}`;
    case 'pending':
    case 'attempting':
    case 'delivered':
      return '';
  }
}
