import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../src/shared/api';
import type { InboundMessage } from '../src/main/gateway/platforms/adapter';
import { answersMessage, auditContext, tagOf, type Answered } from './support/context-audit';
import { startGatewayHarness, type GatewayHarness } from './support/gateway-harness';
import { startOpenAiStub, type ChatRequest, type OpenAiStub } from './support/openai-stub';

/**
 * The context budget over random conversations, through the in-process
 * gateway and a recording OpenAI-compatible server: message sizes from 10
 * tokens to three times the budget, budgets from the minimum (500) up, turn
 * limits, summaries of any length and summarise requests that fail. Every
 * request must fit; no turn may leave the agent's view except in a summarise
 * request the agent answered; no summary may claim a turn its request did not
 * carry; a long message is cut the same way every turn, saying so
 * (support/context-audit.ts).
 */

const MODEL = 'base-model'; // an unknown family: 3 characters a token
const CHARS_PER_TOKEN = 3;
const FILLER = 'lorem ipsum dolor sit amet, ';

function filler(tokens: number): string {
  const chars = Math.max(0, tokens * CHARS_PER_TOKEN);
  return FILLER.repeat(Math.ceil(chars / FILLER.length)).slice(0, chars);
}

/** A size as thousandths of the budget, up to three budgets. */
const perMille = fc.integer({ min: 0, max: 3000 });

const scenario = fc.record({
  budget: fc.integer({ min: 500, max: 2000 }),
  contextTurns: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
  group: fc.boolean(),
  /** Sizes as fractions of the budget: 10 tokens up to three budgets. */
  messages: fc.array(fc.record({ user: perMille, reply: perMille }), { minLength: 2, maxLength: 9 }),
  summaries: fc.array(fc.option(perMille, { nil: undefined }), { minLength: 1, maxLength: 6 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

const size = (perMille: number, budget: number) => Math.max(10, Math.round((perMille * budget) / 1000));

/** One gateway and one stub for every run (each run is its own chat, with its own budget): starting them per run would take most of the time. */
let stub: OpenAiStub;
let harness: GatewayHarness;
/** The run under way: the stub answers from it. */
let run: { s: Scenario; sent: Map<string, string>; answers: Answered[]; summaries: number } | undefined;
let runs = 0;

beforeAll(async () => {
  stub = await startOpenAiStub((request: ChatRequest) => {
    const { s, sent, answers } = run!;
    const index = answersMessage(request);
    if (index !== undefined) {
      answers.push(undefined);
      const text = `${tagOf('a', index)} ${filler(size(s.messages[index - 1]!.reply, s.budget))}`;
      sent.set(`a${index}`, text);
      return text;
    }
    const scripted = s.summaries[run!.summaries++ % s.summaries.length];
    const text = scripted === undefined ? '' : `Summary: ${filler(size(scripted, s.budget))}`;
    answers.push(text);
    return text;
  });
  harness = await startGatewayHarness({ agent: { type: 'openai', baseUrl: stub.baseUrl, model: MODEL } });
});
afterAll(async () => {
  await harness?.close();
  await stub?.close();
});

async function converse(s: Scenario): Promise<string[]> {
  const sessions = { contextTokens: s.budget, ...(s.contextTurns === undefined ? {} : { contextTurns: s.contextTurns }) };
  const set = await harness.gateway.api.dispatch('setConfig', { config: { agent: { type: 'openai', baseUrl: stub.baseUrl, model: MODEL }, sessions } });
  if (!set.ok) throw new Error(set.error.message);
  run = { s, sent: new Map(), answers: [], summaries: 0 };
  stub.requests.length = 0;
  const chatId = String(++runs);
  const chat = s.group ? { chatId: `-100${chatId}`, chatType: 'group', chatName: 'Tea Club' } : { chatId, chatType: 'direct' };
  let sessionId: string | undefined;
  for (const [i, message] of s.messages.entries()) {
    const text = `${tagOf('u', i + 1)} ${filler(size(message.user, s.budget))}`;
    run.sent.set(`u${i + 1}`, text);
    const messageRef = `r${runs}m${i + 1}`;
    const source = { platform: 'telegram', ...chat, senderId: `42${runs}`, senderName: 'Ada', messageId: messageRef } as InboundMessage['source'];
    sessionId = (await harness.gateway.pipeline.handle({ source, text, messageRef })).sessionId;
  }
  const page = await harness.gateway.api.dispatch('getTranscript', { sessionId: sessionId!, pageSize: 500 });
  if (!page.ok) throw new Error(page.error.message);
  const messages = (page.value as { messages: TranscriptMessage[] }).messages;
  const covers = messages.flatMap((message) => (message.role === 'summary' ? [message.covers] : []));
  return auditContext({ budget: s.budget, model: MODEL, requests: [...stub.requests], answers: run.answers, sent: run.sent, summaries: covers });
}

describe('the context budget over random conversations', () => {
  it('keeps every request within budget, loses no turn and lets no summary claim what it never saw', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        expect(await converse(s)).toEqual([]);
      }),
      { seed: 41, numRuns: 25 },
    );
  }, 120_000);

  it('condenses with room to spare, so a long conversation is not summarised on every turn', async () => {
    const turns = 40;
    const s: Scenario = {
      budget: 4000,
      contextTurns: 10,
      group: false,
      messages: Array.from({ length: turns }, () => ({ user: 3, reply: 3 })),
      summaries: [20],
    };
    expect(await converse(s)).toEqual([]);
    // Condensing to the least that fits would summarise on every turn past the tenth message (~35 requests).
    expect(run!.summaries).toBeGreaterThan(0);
    expect(run!.summaries).toBeLessThanOrEqual(turns / 3);
  }, 60_000);
});
