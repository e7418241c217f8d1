import type { SessionPage, SessionSummary, TranscriptMessage } from '../../shared/api';
import { resolveDataDir } from '../gateway/data-dir';
import { toDisplayLine, toTerminalText } from '../gateway/session/display-text';
import { DEFAULT_LIST_PAGE_SIZE, SessionReader } from '../gateway/session/session-reader';
import { dataDirToUse, formatTime, parseCommandArgs, parseCursor, parsePage, UsageError, type CliContext, type Command } from './command';
import { withDatabase } from './ledger-access';

const USAGE = `Usage: homing sessions list [--json] [--after CURSOR] [--data-dir DIR]
       homing sessions show <session-key-or-id> [--json] [--data-dir DIR]

  list            conversations, most recently active first
  show            one conversation's transcript (a key shows its current session)
  --json          machine-readable output
  --after CURSOR  the next page: the cursor the previous page printed (50 per page)
  --page N        page N of the list (slower the deeper it is; --after is the way to walk)
  --data-dir DIR  data directory (default: $HOMING_DATA_DIR, else the tray app's)`;

/**
 * Reads the data directory's homing.db and transcripts directly, so it works
 * whether or not a gateway is running (WAL lets both use the database). It only
 * reads transcripts: a line a running gateway is writing is skipped, not cut.
 */
export const sessionsCommand: Command = {
  name: 'sessions',
  summary: 'list conversations and show their transcripts',
  usage: USAGE,
  async run(args, context) {
    const { values, positionals } = parseCommandArgs(
      'sessions',
      args,
      { json: { type: 'boolean' }, after: { type: 'string' }, page: { type: 'string' }, 'data-dir': { type: 'string' } },
      { min: 1, max: 2 },
    );
    const [action, target] = positionals;
    const json = values.json ?? false;
    const dataDir = resolveDataDir(values['data-dir'], context.env);
    switch (action) {
      case 'list': {
        if (target !== undefined) throw new UsageError(`sessions list: unexpected argument "${target}"`);
        const cursor = parseCursor('sessions list', values.after, values.page);
        const page = parsePage('sessions list', values.page);
        dataDirToUse('sessions', values['data-dir'], context.env);
        const result = withReader(dataDir, (reader) => reader.list(cursor ? { cursor } : { page })) ?? {
          sessions: [],
          page,
          pageSize: DEFAULT_LIST_PAGE_SIZE,
          total: 0,
          nextCursor: null,
        };
        if (json) context.stdout(JSON.stringify(result, null, 2));
        else printList(result, dataDir, context);
        return 0;
      }
      case 'show': {
        if (target === undefined) throw new UsageError('sessions show: which session? give its id or key');
        if (values.page !== undefined || values.after !== undefined) throw new UsageError('sessions show: --after and --page apply to list only');
        dataDirToUse('sessions', values['data-dir'], context.env);
        const shown = withReader(dataDir, (reader) => {
          const session = reader.find(target);
          if (!session) return undefined;
          const messages: TranscriptMessage[] = [];
          for (let page = 1, pageCount = 1; page <= pageCount; page++) {
            const result = reader.transcript(session.sessionId, { page, pageSize: 500 });
            messages.push(...result.messages);
            pageCount = result.pageCount;
          }
          const others = reader.history(session.sessionKey).filter((other) => other.sessionId !== session.sessionId);
          return { session, otherSessions: others, messages };
        });
        if (!shown) throw new Error(`no session ${JSON.stringify(target)} in ${dataDir}`);
        if (json) context.stdout(JSON.stringify(shown, null, 2));
        else printTranscript(shown.session, shown.otherSessions, shown.messages, context);
        return 0;
      }
      default:
        throw new UsageError(`sessions: unknown action "${action}"; use list or show`);
    }
  },
};

/** undefined when the data directory has no database yet (nothing to show, nothing created). */
function withReader<T>(dataDir: string, read: (reader: SessionReader) => T): T | undefined {
  return withDatabase(dataDir, (db) => read(new SessionReader(db, dataDir)));
}

function printList(result: SessionPage, dataDir: string, context: CliContext): void {
  if (result.total === 0) {
    context.stdout(`No sessions in ${dataDir}.`);
    return;
  }
  for (const session of result.sessions) {
    const title = session.title ? toDisplayLine(session.title, 40) : session.chat;
    const preview = session.lastMessagePreview ? `  “${toDisplayLine(session.lastMessagePreview, 60)}”` : '';
    const state = session.current ? '' : ` (ended${session.endReason ? `: ${session.endReason}` : ''})`;
    context.stdout(
      `${session.sessionId}  ${session.platform}/${session.chatType}  ${session.messageCount} msgs  ${formatTime(session.updatedAt)}  ${title}${state}${preview}`,
    );
  }
  const pages = Math.max(1, Math.ceil(result.total / result.pageSize));
  const next = result.nextCursor ? `; next page: --after ${result.nextCursor}` : '';
  context.stdout(`— page ${result.page} of ${pages}, ${result.total} session${result.total === 1 ? '' : 's'}${next}`);
}

function printTranscript(session: SessionSummary, others: SessionSummary[], messages: TranscriptMessage[], context: CliContext): void {
  context.stdout(`Session ${session.sessionId}${session.current ? '' : ' (ended)'}`);
  context.stdout(`  key      ${toDisplayLine(session.sessionKey, 200)}`);
  context.stdout(`  chat     ${session.title ? `${toDisplayLine(session.title, 80)} ` : ''}(${session.chat}, ${session.platform}/${session.chatType})`);
  context.stdout(`  messages ${session.messageCount}, started ${formatTime(session.createdAt)}`);
  if (others.length > 0) context.stdout(`  earlier  ${others.map((other) => other.sessionId).join(', ')}`);
  context.stdout('');
  for (const message of messages) {
    const who =
      message.role === 'user'
        ? `${message.sender.name ? toDisplayLine(message.sender.name, 40) + ' ' : ''}(${message.sender.pseudonym})`
        : message.role === 'summary'
          ? `summary of ${message.covers} earlier message${message.covers === 1 ? '' : 's'}${message.cut ? `, ${message.cut} cut to fit first` : ''}${message.trimmed ? ', its end cut' : ''}`
          : 'assistant';
    context.stdout(`[${formatTime(message.at)}] ${who}: ${toTerminalText(message.text)}`);
  }
}
