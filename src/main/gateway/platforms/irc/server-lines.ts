import type { Client, ircLineParser } from 'irc-framework';

/**
 * Keeps a hostile or broken IRC server from killing the gateway through
 * irc-framework. Its handlers read parameters without checking that they are
 * there (`:x!u@h PRIVMSG`, `CAP`, `BATCH`, `353`, `311`… with too few
 * parameters throw inside its socket handler, which is an uncaught exception
 * in our process). Two layers:
 *
 * 1. A line is dropped before irc-framework parses it when its command has
 *    fewer parameters than the handler reads (the table below, measured on
 *    irc-framework 4.14 and rounded up to what RFC 2812 / IRCv3 say the reply
 *    has), or when it is longer than any server may send.
 * 2. Whatever still throws while irc-framework handles a line — or while our
 *    own listeners, which it calls synchronously, handle it — is caught there
 *    and reported, and the connection goes on with the next line.
 */

/**
 * The longest line we accept: 512 bytes (RFC 2812) plus 8 191 bytes of IRCv3
 * tags, and some slack for servers that count characters instead of bytes.
 */
export const MAX_SERVER_LINE = 16_384;

/** Parameters (after the command) a line needs before irc-framework may see it. */
const MIN_PARAMS: Readonly<Record<string, number>> = {
  PRIVMSG: 2,
  NOTICE: 2,
  TAGMSG: 1,
  CAP: 3,
  BATCH: 1,
  JOIN: 1,
  PART: 1,
  KICK: 2,
  NICK: 1,
  TOPIC: 2,
  INVITE: 2,
  MODE: 1,
  ACCOUNT: 1,
  CHGHOST: 2,
  SETNAME: 1,
  AUTHENTICATE: 1,
  '001': 1,
  '005': 2,
  '221': 1,
  '276': 2,
  '301': 2,
  '303': 1,
  '305': 1,
  '306': 1,
  '307': 2,
  '310': 2,
  '311': 6,
  '312': 3,
  '313': 2,
  '314': 6,
  '315': 2,
  '317': 3,
  '318': 2,
  '319': 3,
  '320': 2,
  '324': 3,
  '328': 3,
  '329': 3,
  '330': 3,
  '331': 2,
  '332': 3,
  '333': 4,
  '335': 2,
  '338': 2,
  '341': 3,
  '344': 2,
  '346': 3,
  '347': 2,
  '348': 3,
  '349': 2,
  '352': 8,
  '353': 4,
  '354': 2,
  '364': 4,
  '366': 2,
  '367': 3,
  '368': 2,
  '369': 2,
  '378': 2,
  '379': 2,
  '396': 2,
  '406': 2,
  '432': 2,
  '433': 2,
  '671': 2,
  '730': 2,
  '731': 2,
  '732': 1,
  '900': 4,
  '901': 2,
  '902': 1,
  '903': 1,
  '904': 1,
  '905': 1,
  '906': 1,
  '907': 1,
};

/** Why a server line must not reach irc-framework, or undefined when it may. */
export function serverLineProblem(line: string, parse: typeof ircLineParser): string | undefined {
  if (line.length > MAX_SERVER_LINE) return `longer than ${MAX_SERVER_LINE} characters`;
  const parsed = parse(line);
  if (!parsed) return undefined; // irc-framework drops it itself
  const needed = MIN_PARAMS[parsed.command];
  if (needed !== undefined && parsed.params.length < needed) {
    return `${parsed.command} needs ${needed} parameters, got ${parsed.params.length}`;
  }
  return undefined;
}

export interface ServerLineReport {
  /** A line that was not handed to irc-framework. */
  dropped(line: string, why: string): void;
  /** A line whose handling threw (in irc-framework or in one of our listeners). */
  threw(line: string, error: unknown): void;
}

/**
 * Installs both layers on a client before it connects. irc-framework hands
 * every line from its transport to `connection.addReadBuffer` (one connection
 * object per client, kept across reconnects), so that one method is the door.
 */
export function guardServerLines(client: Client, parse: typeof ircLineParser, report: ServerLineReport): void {
  const connection = client.connection;
  const addReadBuffer = connection.addReadBuffer.bind(connection);
  connection.addReadBuffer = (line: string): void => {
    if (typeof line !== 'string') return;
    try {
      const problem = serverLineProblem(line, parse);
      if (problem !== undefined) {
        report.dropped(line, problem);
        return;
      }
      addReadBuffer(line);
    } catch (error) {
      report.threw(line, error);
    }
  };
}
