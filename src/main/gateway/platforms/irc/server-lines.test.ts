import ircFramework from 'irc-framework';
import { describe, expect, it } from 'vitest';
import { guardServerLines, MAX_SERVER_LINE, serverLineProblem } from './server-lines';

const parse = ircFramework.ircLineParser;
const SHORT = [':x!u@h PRIVMSG', ':x!u@h NOTICE', ':s CAP', ':x BATCH', ':s 353 me', ':s 366', ':s 311', ':s 352 me #c'];

describe('serverLineProblem', () => {
  it('drops the lines with too few parameters for irc-framework, and keeps well-formed ones', () => {
    for (const line of SHORT) expect(serverLineProblem(line, parse), line).toMatch(/needs \d+ parameters/);
    expect(serverLineProblem(':ada!a@h PRIVMSG homing :hello', parse)).toBeUndefined();
    expect(serverLineProblem(':s 353 homing = #c :homing ada', parse)).toBeUndefined();
    expect(serverLineProblem(':s CAP * LS :account-tag', parse)).toBeUndefined();
    expect(serverLineProblem(':s 372 homing :- motd', parse)).toBeUndefined();
  });

  it('drops a line longer than any server may send', () => {
    expect(serverLineProblem(`:x PRIVMSG homing :${'a'.repeat(MAX_SERVER_LINE)}`, parse)).toMatch(/longer than/);
  });
});

describe('guardServerLines', () => {
  it('keeps irc-framework from throwing on malformed lines (it throws on them unguarded)', () => {
    const unguarded = new ircFramework.Client({ host: 'h', port: 1, nick: 'homing' });
    expect(() => unguarded.connection.addReadBuffer(':x!u@h PRIVMSG')).toThrow();

    const client = new ircFramework.Client({ host: 'h', port: 1, nick: 'homing' });
    const dropped: string[] = [];
    const threw: string[] = [];
    guardServerLines(client, parse, { dropped: (line) => dropped.push(line), threw: (line) => threw.push(line) });
    for (const line of SHORT) expect(() => client.connection.addReadBuffer(line)).not.toThrow();
    expect(dropped).toEqual(SHORT);

    // What gets past the table and still throws — here, in one of our own listeners — is caught too.
    client.on('privmsg', () => {
      throw new Error('a listener broke');
    });
    expect(() => client.connection.addReadBuffer(':ada!a@h PRIVMSG homing :hi')).not.toThrow();
    expect(threw).toEqual([':ada!a@h PRIVMSG homing :hi']);
  });
});
