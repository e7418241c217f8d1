import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionSummary, TranscriptMessage } from '../src/shared/api';
import { SHORTEN_SUMMARY_REQUEST, SUMMARISE_REQUEST } from '../src/main/gateway/agents/system-prompt';
import { connectApi, type ApiSocket } from './support/api-socket';
import { answersMessage, auditContext, tagOf, type Answered } from './support/context-audit';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { startOpenAiStub, type ChatRequest, type OpenAiStub } from './support/openai-stub';
import { waitUntil } from './support/wait';

/**
 * The context budget through the real headless gateway (`homing gateway`)
 * and a recording OpenAI-compatible server, at the budgets of issue 41 (500
 * and 1 000, a small local model's) and at the default: a conversation with
 * one message three times the budget, summaries too long for their share and
 * a summarise request that fails. Every request fits; no turn vanishes; each
 * summary stands for exactly what its requests carried; the long message is
 * cut the same way, saying so, every turn; the window's transcript and
 * `/status` say what the summary stands for (support/context-audit.ts).
 */

const MODEL = 'base-model'; // an unknown family: 3 characters a token
const FILLER = 'the kettle, the cups and the green tea; ';

function filler(tokens: number): string {
  const chars = tokens * 3;
  return FILLER.repeat(Math.ceil(chars / FILLER.length)).slice(0, chars);
}

/** Message sizes as fractions of the budget: the sixth is three budgets long. */
const USER = [0.18, 0.12, 0.2, 0.1, 0.16, 3, 0.12, 0.18, 0.1, 0.2, 0.14, 0.1, 0.18, 0.12];
const REPLY = [0.1, 0.14, 0.06, 0.12, 0.1, 0.08];
/** The summariser: a short summary, one far over its share, a failure, a short one again. */
const SUMMARIES: (number | undefined)[] = [0.05, 1.5, undefined, 0.08];

let gateway: RunningGateway | undefined;
let stub: OpenAiStub | undefined;
let api: ApiSocket | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  api?.close();
  await gateway?.stop();
  await stub?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  api = gateway = stub = dataDir = undefined;
});

async function transcriptOf(socket: ApiSocket): Promise<TranscriptMessage[]> {
  const { sessions } = await socket.call<{ sessions: SessionSummary[] }>('listSessions', {});
  if (sessions.length === 0) return [];
  const page = await socket.call<{ messages: TranscriptMessage[] }>('getTranscript', { sessionId: sessions[0]!.sessionId, pageSize: 500 });
  return page.messages;
}

describe.each([
  { name: '500', budget: 500 as number | undefined },
  { name: '1 000', budget: 1000 },
  { name: 'the default (8 000)', budget: undefined },
])('a long local conversation at a budget of $name tokens', ({ budget: configured }) => {
  const budget = configured ?? 8000;
  it('keeps every request within budget, loses no message, and says what the summary stands for', async () => {
    const sent = new Map<string, string>();
    const answers: Answered[] = [];
    let summaries = 0;
    stub = await startOpenAiStub((request: ChatRequest) => {
      const index = answersMessage(request);
      if (index !== undefined) {
        answers.push(undefined);
        const text = `${tagOf('a', index)} ${filler(Math.round(REPLY[index % REPLY.length]! * budget))}`;
        sent.set(`a${index}`, text);
        return text;
      }
      if (request.messages.at(-1)?.content !== SUMMARISE_REQUEST) {
        // Asked to shorten a summary that came out too long: a short one.
        const text = `Shorter summary: ${filler(Math.round(0.05 * budget))}`;
        answers.push(text);
        return text;
      }
      const size = SUMMARIES[summaries++ % SUMMARIES.length];
      const text = size === undefined ? '' : `Summary: ${filler(Math.round(size * budget))}`;
      answers.push(text);
      return text;
    });
    dataDir = mkdtempSync(join(tmpdir(), 'homing-context-budget-'));
    const sessions = configured === undefined ? {} : { sessions: { contextTokens: configured } };
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ agent: { type: 'openai', baseUrl: stub.baseUrl, model: MODEL }, ...sessions }));
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);
    api = await connectApi(gateway);
    const socket = api;

    const replies = async () => (await transcriptOf(socket)).filter((message) => message.role === 'assistant').length;
    const say = async (text: string) => {
      const before = await replies();
      await socket.call('sendLocalMessage', { text });
      await waitUntil('the reply in the transcript', async () => (await replies()) > before, 20_000);
    };
    for (const [i, size] of USER.entries()) {
      const text = `${tagOf('u', i + 1)} ${filler(Math.round(size * budget))}`;
      sent.set(`u${i + 1}`, text);
      await say(text);
    }

    const transcript = await transcriptOf(socket);
    const summaryTurns = transcript.filter((message): message is Extract<TranscriptMessage, { role: 'summary' }> => message.role === 'summary');
    const problems = auditContext({ budget, model: MODEL, requests: stub.requests, answers, sent, summaries: summaryTurns.map((turn) => turn.covers) });
    expect(problems).toEqual([]);
    // Something was condensed, a summarise request failed, and the long message was cut, saying so, in every request that carried it.
    expect(summaryTurns.length).toBeGreaterThan(0);
    expect(answers).toContain('');
    // The summary over its share was condensed again (a summary of the summary), not cut or skipped.
    const again = stub.requests.findIndex((request) => request.messages.at(-1)?.content === SHORTEN_SUMMARY_REQUEST);
    expect(again).toBeGreaterThan(0);
    expect(stub.requests[again]!.messages.some((message) => message.content.startsWith('Summary: '))).toBe(true);
    expect(summaryTurns.some((turn) => turn.text.startsWith('Shorter summary: '))).toBe(true);
    const long = stub.requests.flatMap((request) => request.messages).filter((message) => message.content.includes(tagOf('u', 6)));
    expect(long.length).toBeGreaterThan(1);
    for (const message of long) expect(message.content).toMatch(/\[Homing: this message was cut to fit the context budget: \d+ of \d+ characters shown\]$/);

    // What the summary stands for, where the user looks: the window's transcript and /status.
    const latest = summaryTurns.at(-1)!;
    expect(latest.covers).toBeGreaterThan(0);
    await say('/status');
    const status = (await transcriptOf(socket)).at(-1)!.text;
    // The message count is committed with the next group commit, so under load it may not hold the latest message yet.
    expect(status).toMatch(new RegExp(`Messages: \\d+ \\(the agent sees a summary instead of the ${latest.covers} oldest messages`));
    if (latest.cut) expect(status).toContain(`${latest.cut === 1 ? '1 of them was' : `${latest.cut} of them were`} cut to fit before condensing`);
    expect(status).toMatch(new RegExp(`Context: about \\d+ of ${budget} tokens`));
  }, 120_000);
});
