import { readFileSync } from 'node:fs';
import type { ConversationContext, Agent, AgentResult, AgentTurn, TurnMessage } from './agent.js';
import { httpErrorResult, networkErrorResult, redact, serverMessage, type ErrorContext } from './openai-errors.js';
import { SseParser } from './sse.js';
import { DEFAULT_SYSTEM_PROMPT, instructionsPart, renderSystemPrompt, speakerText, summaryPreface } from './system-prompt.js';
import { abortedResult } from './timeout.js';

export interface OpenAiAgentOptions {
  /** E.g. `http://127.0.0.1:11434/v1` (Ollama), `http://127.0.0.1:1234/v1` (LM Studio). */
  readonly baseUrl: string;
  readonly model: string;
  /** Resolved by the caller from the secret store or an environment variable. */
  readonly apiKey?: string | undefined;
  /**
   * The system message's template, `{placeholders}` filled from the turn's
   * context (system-prompt.ts); DEFAULT_SYSTEM_PROMPT when absent. A turn
   * without context (a connection test) sends it only when it is set.
   */
  readonly systemPrompt?: string | undefined;
  readonly temperature?: number | undefined;
  /** The model takes images: a message's photos go with it as `image_url` content (data URLs). */
  readonly images?: boolean | undefined;
  readonly fetch?: typeof fetch | undefined;
  readonly now?: (() => number) | undefined;
}

/** Chat-completions content: text, or parts (text and images) for a vision model. */
type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string | ContentPart[] };

/** The request body for `POST {baseUrl}/chat/completions`. */
export function chatRequestBody(options: OpenAiAgentOptions, turn: Pick<AgentTurn, 'history' | 'message' | 'context'>) {
  const messages: ChatMessage[] = [];
  const { context } = turn;
  if (context) {
    const template = context.route?.systemPrompt ?? options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
    const parts = [renderSystemPrompt(template, context)];
    if (context.instructions) parts.push(instructionsPart(context.instructions));
    messages.push({ role: 'system', content: parts.join('\n\n') });
    if (context.summary) messages.push({ role: 'system', content: summaryPreface(context.summary) });
  } else if (options.systemPrompt) {
    messages.push({ role: 'system', content: options.systemPrompt });
  }
  for (const m of [...turn.history, turn.message]) messages.push({ role: m.role, content: contentOf(m, context, options) });
  return {
    model: context?.route?.model ?? options.model,
    messages,
    stream: true,
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
  };
}

/**
 * A message's content: its text, with its images as `image_url` parts (base64
 * data URLs: a local server cannot fetch a file of ours) when the model takes
 * images. An image that cannot be read any more (removed meanwhile) is named
 * in words instead.
 */
function contentOf(message: TurnMessage, context: ConversationContext | undefined, options: OpenAiAgentOptions): string | ContentPart[] {
  const text = speakerText(message, context);
  const images = options.images ? (message.attachments ?? []).filter((file) => file.kind === 'image') : [];
  if (images.length === 0) return text;
  const parts: ContentPart[] = [{ type: 'text', text }];
  for (const image of images) {
    try {
      parts.push({ type: 'image_url', image_url: { url: `data:${image.mime};base64,${readFileSync(image.path).toString('base64')}` } });
    } catch {
      parts.push({ type: 'text', text: '[an image that came with this message could not be read any more]' });
    }
  }
  return parts;
}

/**
 * Any OpenAI-compatible chat-completions server, streamed. The agent keeps no
 * state between turns: the whole history goes with every request.
 */
export function createOpenAiAgent(options: OpenAiAgentOptions): Agent {
  const fetchImpl = options.fetch ?? fetch;
  const ctx: ErrorContext = {
    url: displayUrl(options.baseUrl),
    model: options.model,
    apiKey: options.apiKey,
    now: options.now ?? Date.now,
  };
  return {
    kind: 'openai',
    async runTurn(turn) {
      try {
        const model = turn.context?.route?.model;
        return await runChatTurn(fetchImpl, options, model ? { ...ctx, model } : ctx, turn);
      } catch (error) {
        // runTurn never throws; anything unforeseen still becomes a result.
        if (turn.signal.aborted) return abortedResult(turn.signal);
        return { ok: false, kind: 'failed', error: redact(`unexpected error: ${String(error)}`, options.apiKey) };
      }
    },
    async close() {},
  };
}

async function runChatTurn(
  fetchImpl: typeof fetch,
  options: OpenAiAgentOptions,
  ctx: ErrorContext,
  turn: AgentTurn,
): Promise<AgentResult> {
  if (turn.signal.aborted) return abortedResult(turn.signal);
  let response: Response;
  try {
    response = await fetchImpl(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream, application/json',
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify(chatRequestBody(options, turn)),
      signal: turn.signal,
    });
  } catch (error) {
    return turn.signal.aborted ? abortedResult(turn.signal) : networkErrorResult(error, ctx, 'connect');
  }

  if (!response.ok) {
    const body = await response.text().catch(() => '');
    return turn.signal.aborted ? abortedResult(turn.signal) : httpErrorResult(response.status, response.headers, body, ctx);
  }
  const contentType = response.headers.get('content-type') ?? '';
  // Some servers ignore `stream: true` and answer with one JSON completion.
  if (contentType.includes('application/json')) return readCompletion(response, ctx, turn);
  return readStream(response, ctx, turn);
}

async function readCompletion(response: Response, ctx: ErrorContext, turn: AgentTurn): Promise<AgentResult> {
  let body: string;
  try {
    body = await response.text();
  } catch (error) {
    return turn.signal.aborted ? abortedResult(turn.signal) : networkErrorResult(error, ctx, 'stream');
  }
  let parsed: Completion;
  try {
    parsed = JSON.parse(body) as Completion;
  } catch {
    return badResponse(ctx, 'its JSON reply could not be parsed');
  }
  if (parsed?.error) return { ok: false, kind: 'failed', error: `the server reported an error: ${serverMessage(body, ctx)}` };
  const text = parsed?.choices?.[0]?.message?.content;
  if (typeof text !== 'string') return badResponse(ctx, 'its reply has no choices[0].message.content');
  if (text === '') return badResponse(ctx, 'the reply was empty');
  turn.onToken(text);
  return { ok: true, text };
}

async function readStream(response: Response, ctx: ErrorContext, turn: AgentTurn): Promise<AgentResult> {
  const state: StreamState = { text: '', done: false, finished: false, events: 0 };
  const parser = new SseParser((data) => onEvent(data, state, ctx, turn));
  const reader = response.body?.getReader();
  if (!reader) return badResponse(ctx, 'it sent no body');
  const decoder = new TextDecoder();
  try {
    while (!state.done && !state.failure) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.push(decoder.decode(value, { stream: true }));
    }
    parser.push(decoder.decode());
    parser.end();
  } catch (error) {
    return turn.signal.aborted ? abortedResult(turn.signal) : networkErrorResult(error, ctx, 'stream');
  } finally {
    // After [DONE] or a failure, stop reading; the server may keep the socket.
    reader.cancel().catch(() => {});
  }
  if (state.failure) return state.failure;
  if (state.events === 0) return badResponse(ctx, 'its reply is not a chat-completions event stream');
  if (!state.done && !state.finished) {
    return { ok: false, kind: 'failed', error: `the stream from ${ctx.url} ended before the reply was complete` };
  }
  if (state.text === '') return badResponse(ctx, 'the reply was empty');
  return { ok: true, text: state.text };
}

interface StreamState {
  text: string;
  /** `data: [DONE]` seen. */
  done: boolean;
  /** A `finish_reason` seen: a server that omits [DONE] still finished. */
  finished: boolean;
  events: number;
  failure?: AgentResult;
}

interface Completion {
  error?: unknown;
  choices?: { message?: { content?: unknown }; delta?: { content?: unknown }; finish_reason?: unknown }[];
}

function onEvent(data: string, state: StreamState, ctx: ErrorContext, turn: AgentTurn): void {
  if (state.done || state.failure) return;
  state.events++;
  if (data.trim() === '[DONE]') {
    state.done = true;
    return;
  }
  let chunk: Completion;
  try {
    chunk = JSON.parse(data) as Completion;
  } catch {
    state.failure = badResponse(ctx, 'an event in its stream is not JSON');
    return;
  }
  if (chunk?.error) {
    state.failure = { ok: false, kind: 'failed', error: `the server reported an error mid-reply: ${serverMessage(data, ctx)}` };
    return;
  }
  // A usage-only chunk has `choices: []`; a role-only first delta has no content.
  const choice = chunk?.choices?.[0];
  const content = choice?.delta?.content;
  if (typeof content === 'string' && content !== '') {
    state.text += content;
    turn.onToken(content);
  }
  if (choice?.finish_reason) state.finished = true;
}

function badResponse(ctx: ErrorContext, why: string): AgentResult {
  return { ok: false, kind: 'bad-response', error: `${ctx.url} did not answer like an OpenAI-compatible server: ${why}` };
}

/** The URL as it may appear in messages and logs: without user:password. */
export function displayUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/+$/, '');
  } catch {
    return baseUrl;
  }
}

/**
 * Asks whether an Ollama server answers at `baseUrl` (`GET /api/tags`) and
 * returns its model names, or undefined when nothing answers within
 * `timeoutMs`. Used at first run to offer Ollama.
 */
export async function detectOllama(
  fetchImpl: typeof fetch = fetch,
  baseUrl = 'http://127.0.0.1:11434',
  timeoutMs = 1_500,
): Promise<string[] | undefined> {
  try {
    const response = await fetchImpl(`${baseUrl.replace(/\/+$/, '')}/api/tags`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { models?: { name?: unknown; model?: unknown }[] };
    if (!Array.isArray(body?.models)) return undefined;
    return body.models
      .map((m) => (typeof m?.name === 'string' ? m.name : typeof m?.model === 'string' ? m.model : undefined))
      .filter((name): name is string => name !== undefined);
  } catch {
    return undefined;
  }
}
