import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { connectIrcUser, linesFrom, type IrcUser } from './support/irc-user';
import { FAST_IRC, startNgircd, type RunningNgircd } from './support/ngircd';
import { waitUntil } from './support/wait';

/**
 * The agent writes Markdown; on IRC (a real ngircd, a real user client) it must
 * arrive readable: bold as IRC bold, lists as bullets, code blocks as their
 * lines without fences, links as label and address — no stray `**`, no
 * backticks, no code line broken across IRC lines.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const BOT = 'homing';
const CHANNEL = '#homing';
const B = '\x02';
const I = '\x1D';

describe('Markdown replies on IRC (real ngircd)', () => {
  let server: RunningNgircd;
  let harness: GatewayHarness | undefined;
  let scratch: string;
  const users: IrcUser[] = [];

  beforeEach(async () => {
    server = await startNgircd();
    scratch = mkdtempSync(join(tmpdir(), 'homing-irc-format-'));
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    for (const user of users.splice(0)) await user.quit();
    await server.dispose();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function answerWith(markdown: string): Promise<string[]> {
    const file = join(scratch, 'reply.md');
    writeFileSync(file, markdown);
    const alice = await connectIrcUser(server, 'alice', [CHANNEL]);
    users.push(alice);
    harness = await startGatewayHarness(
      {
        agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT, '--reply-file', file] },
        platforms: { irc: { host: server.host, port: server.port, tls: false, nick: BOT, channels: [CHANNEL], allow: ['alice'] } },
      },
      { tuning: { irc: FAST_IRC } },
    );
    await harness.waitFor('platform.state', (event) => event.platform.name === 'irc' && event.platform.state === 'connected');
    await waitUntil(`${BOT} to join ${CHANNEL}`, () => alice.joins.some((join) => join.nick === BOT));
    alice.client.say(CHANNEL, `${BOT}: how do I set it up?`);
    const recorded = await harness.waitFor('reply.recorded', undefined, 30_000);
    await harness.waitFor('delivery.changed', (event) => event.delivery.id === recorded.obligationId && event.delivery.state === 'delivered', 30_000);
    await alice.roundTrip();
    return linesFrom(alice, BOT, CHANNEL);
  }

  it('shows bold, a list, a code block and a link readably, line for line', async () => {
    const lines = await answerWith(
      [
        '## Setup',
        '',
        'Install it with **care**:',
        '',
        '- first step',
        '- second step, *slowly*',
        '',
        '```sh',
        'npm install homing',
        'cd homing && npm start -- --data-dir "$HOME/x"',
        '```',
        '',
        'Read [the guide](https://example.org/guide?a=1&b=2) for more.',
      ].join('\n'),
    );
    expect(lines).toEqual([
      `${B}Setup${B}`,
      `Install it with ${B}care${B}:`,
      '• first step',
      `• second step, ${I}slowly${I}`,
      '[sh]',
      'npm install homing',
      'cd homing && npm start -- --data-dir "$HOME/x"',
      'Read the guide (https://example.org/guide?a=1&b=2) for more.',
    ]);
  });

  it('keeps a long code block readable when the reply is split: no fences, no code line cut in two', async () => {
    const code = Array.from({ length: 180 }, (_, i) => `const value${i} = compute(${i}, "some argument"); // line ${i}`);
    const lines = await answerWith(['Here is **the file**:', '', '```js', ...code, '```', '', 'That is **all**.'].join('\n'));
    expect(lines[0]).toBe(`Here is ${B}the file${B}:`);
    expect(lines.at(-1)).toBe(`That is ${B}all${B}.`);
    for (const line of lines) {
      expect(line).not.toMatch(/\*\*|```|`/);
    }
    // Every code line arrives whole and in order (a continued block repeats its language tag).
    expect(lines.filter((line) => line.startsWith('const '))).toEqual(code);
    expect(lines.filter((line) => line !== '[js]' && !line.startsWith('const '))).toHaveLength(2);
    expect(harness!.gateway.deliveries.ledger.chunks(harness!.events.find((event) => event.type === 'reply.recorded')!.obligationId).length).toBeGreaterThan(1);
  });
});
