import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, AgentResult, ConversationContext, TurnMessage } from './agent.js';
import { createAcpAgent } from './acp.js';
import { runTurnWithTimeout } from './timeout.js';
import { isAlive } from '../../../../test/support/processes';

const fixture = fileURLToPath(new URL('./fixtures/acp-agent.mjs', import.meta.url));
const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

function acpAgent(...flags: string[]): Agent {
  const agent = createAcpAgent({ command: process.execPath, args: [fixture, ...flags], killGraceMs: 300, cancelGraceMs: 1_000 });
  agents.push(agent);
  return agent;
}

async function turn(
  agent: Agent,
  sessionId: string,
  text: string,
  options: { history?: TurnMessage[]; signal?: AbortSignal; timeoutMs?: number; onToken?: (t: string) => void } = {},
) {
  const tokens: string[] = [];
  const result: AgentResult = await runTurnWithTimeout(
    agent,
    {
      sessionId,
      history: options.history ?? [],
      message: { role: 'user', text },
      onToken: (t) => {
        tokens.push(t);
        options.onToken?.(t);
      },
    },
    { timeoutMs: options.timeoutMs ?? 10_000, signal: options.signal },
  );
  return { result, tokens };
}

function textOf(result: AgentResult): string {
  if (!result.ok) throw new Error(`expected a reply, got ${result.kind}: ${result.error}`);
  return result.text;
}

/** The fixture names its ACP sessions `acp-<pid>-<n>` and replies `<session>#<turn>: <text>`. */
function parseReply(text: string) {
  const match = /^acp-(\d+)-(\d+)#(\d+): (.*)$/.exec(text);
  if (!match) throw new Error(`unexpected reply ${JSON.stringify(text)}`);
  return { pid: Number(match[1]), acpSession: `acp-${match[1]}-${match[2]}`, turn: Number(match[3]), rest: match[4] };
}


describe('acp agent', () => {
  it('streams agent message chunks and returns the full text', async () => {
    const { result, tokens } = await turn(acpAgent(), 's_one', 'hello');
    const text = textOf(result);
    expect(tokens).toHaveLength(3);
    expect(tokens.join('')).toBe(text);
    expect(parseReply(text)).toMatchObject({ turn: 1, rest: 'hello' });
  });

  it('maps two Homing sessions to two ACP sessions and reuses a session for its next turn', async () => {
    const agent = acpAgent();
    const a1 = parseReply(textOf((await turn(agent, 's_a', 'one')).result));
    const b1 = parseReply(textOf((await turn(agent, 's_b', 'two')).result));
    const a2 = parseReply(textOf((await turn(agent, 's_a', 'three')).result));
    expect(a1.acpSession).not.toBe(b1.acpSession);
    expect(a2.acpSession).toBe(a1.acpSession);
    expect([a1.turn, b1.turn, a2.turn]).toEqual([1, 1, 2]);
    // One process serves them all.
    expect(new Set([a1.pid, b1.pid, a2.pid]).size).toBe(1);
  });

  it('sends the history as context only when the ACP session is new', async () => {
    const agent = acpAgent();
    const history: TurnMessage[] = [
      { role: 'user', text: 'my name is Ada' },
      { role: 'assistant', text: 'Hello Ada' },
    ];
    expect(parseReply(textOf((await turn(agent, 's_h', 'first', { history })).result)).rest).toBe('first [with history]');
    expect(parseReply(textOf((await turn(agent, 's_h', 'second', { history })).result)).rest).toBe('second');
  });

  it('tells the agent where and when, and who writes, in every turn', async () => {
    const agent = acpAgent();
    const context: ConversationContext = {
      platform: 'irc',
      chatKind: 'channel',
      chat: 'irc:0123456789ab',
      chatTitle: '#homing',
      sender: { pseudonym: 'user_0123456789ab', displayName: 'alice' },
      localTime: '2026-12-02 01:13 (Wednesday)',
      timeZone: 'Europe/Berlin (UTC+01:00)',
    };
    const result = await runTurnWithTimeout(
      agent,
      { sessionId: 's_ctx', history: [], message: { role: 'user', text: 'hi' }, context, onToken: () => {} },
      { timeoutMs: 10_000 },
    );
    expect(parseReply(textOf(result)).rest).toBe(
      'hi [Homing: irc, a channel "#homing" (irc:0123456789ab); from alice (user_0123456789ab); local time 2026-12-02 01:13 (Wednesday), Europe/Berlin (UTC+01:00)]',
    );
  });

  it('cancels a running prompt with session/cancel, and the session answers again afterwards', async () => {
    const agent = acpAgent();
    const controller = new AbortController();
    const { result, tokens } = await turn(agent, 's_c', 'slow', { signal: controller.signal, onToken: () => controller.abort() });
    expect(tokens).toEqual(['thinking']);
    expect(result).toMatchObject({ ok: false, kind: 'cancelled' });
    const next = parseReply(textOf((await turn(agent, 's_c', 'again')).result));
    expect(next).toMatchObject({ turn: 2, rest: 'again' });
  });

  it('times out a prompt the agent never finishes', async () => {
    const agent = acpAgent();
    const started = Date.now();
    const { result } = await turn(agent, 's_t', 'slow', { timeoutMs: 400 });
    expect(result).toMatchObject({ ok: false, kind: 'timeout' });
    // The agent was cancelled and answered it: well before the turn's own 5 s settle deadline would force a result.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((await turn(agent, 's_t', 'hi')).result.ok).toBe(true);
  });

  it('reports a crashing agent with its exit code and stderr, then restarts it for the next turn', async () => {
    const agent = acpAgent();
    const before = parseReply(textOf((await turn(agent, 's_x', 'hi')).result));
    const { result } = await turn(agent, 's_x', 'crash');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.kind).toBe('failed');
    expect(result.error).toContain('exited with code 3');
    expect(result.error).toContain('fixture agent: simulated crash');

    const history: TurnMessage[] = [{ role: 'user', text: 'hi' }];
    const after = parseReply(textOf((await turn(agent, 's_x', 'back?', { history })).result));
    expect(after.pid).not.toBe(before.pid);
    expect(isAlive(before.pid)).toBe(false);
    // A fresh ACP session on the new process, given the history as context.
    expect(after).toMatchObject({ turn: 1, rest: 'back? [with history]' });
  });

  it('sends a message’s images as image blocks to an agent that takes images, and a line to one that does not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'homing-acp-image-'));
    try {
      const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(300, 1)]);
      writeFileSync(join(dir, 'a.png'), png);
      const message: TurnMessage = { role: 'user', text: 'what is this?', attachments: [{ kind: 'image', path: join(dir, 'a.png'), mime: 'image/png', size: png.length }] };
      const run = (agent: Agent) => runTurnWithTimeout(agent, { sessionId: 's_img', history: [], message, onToken: () => {} }, { timeoutMs: 10_000 });
      expect(parseReply(textOf(await run(acpAgent('--images')))).rest).toBe(`what is this? [image image/png ${png.length}]`);
      expect(parseReply(textOf(await run(acpAgent()))).rest).toBe('[a photo came with this message; this agent does not take images, so it is not shown]');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses permission requests from the agent', async () => {
    const { result } = await turn(acpAgent(), 's_p', 'permission');
    expect(result).toEqual({ ok: true, text: 'permission: no' });
  });

  it('kills the agent process on close()', async () => {
    const agent = acpAgent();
    const { pid } = parseReply(textOf((await turn(agent, 's_k', 'hi')).result));
    expect(isAlive(pid)).toBe(true);
    await agent.close();
    expect(isAlive(pid)).toBe(false);
    expect(await turn(agent, 's_k', 'hi')).toMatchObject({ result: { ok: false, kind: 'failed' } });
  });

  it('reports an agent command that does not exist as unreachable', async () => {
    const agent = createAcpAgent({ command: '/nonexistent/acp-agent' });
    agents.push(agent);
    const { result } = await turn(agent, 's_n', 'hi');
    expect(result).toEqual({ ok: false, kind: 'unreachable', error: 'could not start the ACP agent "/nonexistent/acp-agent": not found' });
  });

  it('reports a program that does not speak ACP as a bad response, without waiting for a timeout', async () => {
    const agent = createAcpAgent({ command: process.execPath, args: ['-e', 'process.stdin.resume(); process.stdout.write("hello, I am not an agent\\n")'], killGraceMs: 300 });
    agents.push(agent);
    const { result } = await turn(agent, 's_g', 'hi', { timeoutMs: 5_000 });
    expect(result).toEqual({ ok: false, kind: 'bad-response', error: `the program "${process.execPath}" does not speak ACP; it printed: hello, I am not an agent` });
  });

  it('gives up on an agent that never answers initialize', async () => {
    const agent = createAcpAgent({ command: process.execPath, args: ['-e', 'process.stdin.resume(); setInterval(() => {}, 1000)'], killGraceMs: 300, startTimeoutMs: 300 });
    agents.push(agent);
    const { result } = await turn(agent, 's_q', 'hi');
    expect(result).toMatchObject({ ok: false, kind: 'timeout', error: expect.stringContaining('did not answer initialize within 300 ms') });
  });

  it('stops an agent that is still starting when close() is called', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'homing-acp-')), 'pid');
    const code = `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.stdin.resume(); setInterval(() => {}, 1000)`;
    const agent = createAcpAgent({ command: process.execPath, args: ['-e', code], killGraceMs: 300 });
    const pending = turn(agent, 's_w', 'hi');
    let pid = 0;
    for (let i = 0; i < 100 && !pid; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0;
    }
    expect(isAlive(pid)).toBe(true);
    const started = Date.now();
    await agent.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(isAlive(pid)).toBe(false);
    expect((await pending).result).toMatchObject({ ok: false });
  });
});
