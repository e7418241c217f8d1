import fc from 'fast-check';
import { FAKE_SERVER_NAME } from './fake-irc-server';

/**
 * What a hostile or broken IRC server sends, for the fake server to feed a client:
 * the lines issue 12 found, and a generator of malformed ones. Nothing here comes
 * from the nick `alice`, whose messages the tests count.
 */

/** The lines issue 12 found: each threw inside irc-framework's socket handler. */
export const KNOWN_KILLERS = [
  ':x!u@h PRIVMSG',
  ':x!u@h NOTICE',
  ':x!u@h PRIVMSG homing',
  `:${FAKE_SERVER_NAME} CAP`,
  `:${FAKE_SERVER_NAME} CAP *`,
  ':x!u@h BATCH',
  `:${FAKE_SERVER_NAME} 353`,
  `:${FAKE_SERVER_NAME} 353 homing`,
  `:${FAKE_SERVER_NAME} 366`,
  `:${FAKE_SERVER_NAME} 311`,
  `:${FAKE_SERVER_NAME} 352 homing`,
  `:${FAKE_SERVER_NAME} 900 homing`,
  `:${FAKE_SERVER_NAME} 333 homing #homing`,
  `:${FAKE_SERVER_NAME} 732`,
  `@batch=zz :${FAKE_SERVER_NAME} BATCH -zz`,
];

const COMMANDS = [
  'PRIVMSG', 'NOTICE', 'TAGMSG', 'CAP', 'BATCH', 'JOIN', 'PART', 'KICK', 'QUIT', 'NICK', 'TOPIC', 'INVITE', 'MODE',
  'ACCOUNT', 'CHGHOST', 'SETNAME', 'AWAY', 'AUTHENTICATE', 'PING', 'PONG', 'ERROR', 'WALLOPS',
  '001', '002', '004', '005', '221', '251', '276', '301', '303', '305', '306', '307', '311', '312', '313', '314', '315',
  '317', '318', '319', '320', '321', '322', '323', '324', '328', '329', '330', '331', '332', '333', '335', '338', '341',
  '344', '346', '347', '348', '349', '352', '353', '354', '364', '365', '366', '367', '368', '369', '372', '375', '376',
  '378', '379', '396', '401', '403', '404', '405', '406', '432', '433', '471', '473', '474', '475', '671', '730', '731',
  '732', '900', '901', '903', '904',
];

/** Tokens a server line is made of, the awkward ones on purpose; never `alice`, whose messages the test counts. */
const token = fc.oneof(
  fc.constantFrom('', '*', '+', '-', ':', '=', '@', '#homing', '#other', 'homing', 'bob', 'LS', 'ACK', 'NAK', 'NEW', 'DEL', 'END', '+zz', '-zz', 'account-tag', 'extended-join', '\x01VERSION\x01', '\x01', 'CHANTYPES=', 'CASEMAPPING=ascii', 'PREFIX=', 'a=b'),
  fc.string({ maxLength: 12 }).map((text) => text.replace(/[\s\0]/g, '')),
);

export const serverLine = fc
  .record({
    tags: fc.option(fc.array(fc.tuple(fc.constantFrom('time', 'account', 'batch', 'msgid', 'label', '+x', ''), token), { maxLength: 3 }), { nil: undefined }),
    prefix: fc.option(fc.constantFrom(FAKE_SERVER_NAME, 'x!u@h', 'bob!b@h', 'homing!h@h', 'x', '!', '@', 'x!', '!@'), { nil: undefined }),
    command: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...COMMANDS) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 4 }).map((text) => text.replace(/[\s\0]/g, 'X')) }),
    params: fc.array(token, { maxLength: 9 }),
    trailing: fc.option(fc.string({ maxLength: 40 }).map((text) => text.replace(/[\r\n]/g, ' ')), { nil: undefined }),
  })
  .map(({ tags, prefix, command, params, trailing }) =>
    [
      tags ? `@${tags.map(([key, value]) => (value ? `${key}=${value.replace(/[; ]/g, '')}` : key)).join(';')}` : '',
      prefix ? `:${prefix}` : '',
      command,
      ...params.filter(Boolean),
      trailing === undefined ? '' : `:${trailing}`,
    ]
      .filter(Boolean)
      .join(' '),
  );

/** Broken framing: bare LF, NUL bytes, invalid UTF-8; then a 100 KB line. */
export const BROKEN_FRAMING: readonly (string | Buffer)[] = [
  ':x!u@h PRIVMSG homing :bare LF\n\r\n\n:x!u@h NOTICE homing :\0nul\0\r\n',
  Buffer.from([0x3a, 0x78, 0x20, 0x50, 0x52, 0x49, 0x56, 0x4d, 0x53, 0x47, 0x20, 0xff, 0xfe, 0x20, 0x3a, 0xc3, 0x28, 0x0d, 0x0a]),
  `:x!u@h PRIVMSG homing :${'y'.repeat(100_000)}\r\n`,
];
