import { StringDecoder } from 'node:string_decoder';

/** One IRC protocol line, parsed just enough for the chaos harness (RFC 1459 framing, no tags). */
export interface IrcLine {
  /** The nick in the prefix (`:nick!user@host`), or the server name; '' when there is no prefix. */
  readonly nick: string;
  readonly command: string;
  readonly params: readonly string[];
}

export function parseIrcLine(raw: string): IrcLine | undefined {
  let rest = raw.replace(/\r?\n$/, '');
  if (rest.startsWith('@')) {
    const space = rest.indexOf(' ');
    if (space < 0) return undefined;
    rest = rest.slice(space + 1);
  }
  let nick = '';
  if (rest.startsWith(':')) {
    const space = rest.indexOf(' ');
    if (space < 0) return undefined;
    const prefix = rest.slice(1, space);
    nick = prefix.split('!')[0]!;
    rest = rest.slice(space + 1);
  }
  const params: string[] = [];
  let command = '';
  while (rest.length > 0) {
    if (rest.startsWith(':') && command !== '') {
      params.push(rest.slice(1));
      break;
    }
    const space = rest.indexOf(' ');
    const word = space < 0 ? rest : rest.slice(0, space);
    rest = space < 0 ? '' : rest.slice(space + 1);
    if (word === '') continue;
    if (command === '') command = word.toUpperCase();
    else params.push(word);
  }
  return command === '' ? undefined : { nick, command, params };
}

/**
 * Splits a byte stream into lines: returns the complete lines and keeps the
 * rest for the next chunk. IRC lines end in CR LF (a lone LF is tolerated).
 */
export class LineSplitter {
  private buffered = '';
  // A multi-byte character (the marker has two) may be cut between two reads.
  private readonly decoder = new StringDecoder('utf8');

  push(data: Buffer): string[] {
    this.buffered += this.decoder.write(data);
    const lines: string[] = [];
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      lines.push(this.buffered.slice(0, nl).replace(/\r$/, ''));
      this.buffered = this.buffered.slice(nl + 1);
    }
    return lines;
  }
}
