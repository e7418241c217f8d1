import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import type { ClientConnection, ContentBlock, RequestPermissionRequest, RequestPermissionResponse, SessionUpdate } from '@agentclientprotocol/sdk';
import type { Agent, AgentResult, AgentTurn, TurnMessage } from './agent.js';
import { DEFAULT_KILL_GRACE_MS, describeExit, spawnAgentProgram, stopProcessGroup, type AgentProgram } from './process-group.js';
import { loadAcpSdk, type AcpSdk } from './load-acp-sdk.js';
import { describeSpawnError } from './spawn-error.js';
import { contextLine, quoteLines, speakerLabel, summaryPreface } from './system-prompt.js';
import { abortedResult, formatDuration } from './timeout.js';

export interface AcpAgentOptions extends AgentProgram {
  /** The absolute working directory announced in `session/new`; defaults to cwd. */
  readonly sessionCwd?: string | undefined;
  readonly clientVersion?: string | undefined;
  readonly killGraceMs?: number | undefined;
  /** After `session/cancel`, how long to wait for the agent to end its prompt. */
  readonly cancelGraceMs?: number | undefined;
  /** How long the agent may take to answer `initialize` (launchers like npx are slow). */
  readonly startTimeoutMs?: number | undefined;
}

export const DEFAULT_START_TIMEOUT_MS = 30_000;

type Failure = Extract<AgentResult, { ok: false }>;

const CLOSED: Failure = { ok: false, kind: 'failed', error: 'the ACP agent has been closed' };

/** One running agent process, its connection, and the ACP sessions opened on it. */
interface AcpProcess {
  readonly child: ChildProcess;
  readonly connection: ClientConnection;
  /** The SDK's method names. */
  readonly methods: AcpSdk['methods'];
  /** Homing session id → ACP session id. Dies with the process. */
  readonly sessions: Map<string, string>;
  /** ACP session id → the running turn's update handler. */
  readonly listeners: Map<string, (update: SessionUpdate) => void>;
  /** Resolves with a clear error when the process ends. */
  readonly died: Promise<Failure>;
  /** The agent said at `initialize` that it takes images in prompts (`promptCapabilities.image`). */
  readonly images: boolean;
}

/**
 * An Agent Client Protocol agent over stdio. Unlike the other agents this one is
 * stateful: the process is kept between turns and keeps each conversation's
 * history itself, so a turn sends only the new message. Homing's transcript is
 * still the source of truth: when a conversation has no ACP session yet (first
 * turn, or the process was restarted) its history goes along as context.
 */
export function createAcpAgent(options: AcpAgentOptions): Agent {
  let current: Starting | undefined;
  let closed = false;

  const ensureProcess = (sdk: AcpSdk): Promise<AcpProcess | Failure> => {
    if (!current) {
      const starting = startProcess(sdk, options);
      current = starting;
      // A failed start or a dead process is forgotten, so the next turn starts afresh.
      const forget = () => {
        if (current === starting) current = undefined;
      };
      void starting.ready.then((proc) => (isProcess(proc) ? proc.died.then(forget) : forget()));
    }
    return current.ready;
  };

  return {
    kind: 'acp',
    async runTurn(turn) {
      if (closed) return CLOSED;
      try {
        const sdk = await untilAborted(loadAcpSdk(), turn.signal);
        if (sdk === ABORTED) return abortedResult(turn.signal);
        // Closed while the SDK loaded: no process is started for nobody.
        if (closed) return CLOSED;
        const proc = await untilAborted(ensureProcess(sdk), turn.signal);
        if (proc === ABORTED) return abortedResult(turn.signal);
        if (!isProcess(proc)) return proc;
        return await runAcpTurn(proc, options, turn);
      } catch (error) {
        if (turn.signal.aborted) return abortedResult(turn.signal);
        return { ok: false, kind: 'failed', error: `the ACP agent failed: ${describe(error)}` };
      }
    },
    async close() {
      closed = true;
      const starting = current;
      current = undefined;
      // Also while it is still starting: a hung `initialize` must not keep it alive.
      if (starting) {
        starting.connection.close();
        await stopProcessGroup(starting.child, options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
      }
    },
  };
}

function isProcess(value: AcpProcess | Failure): value is AcpProcess {
  return 'child' in value;
}

interface Starting {
  readonly child: ChildProcess;
  readonly connection: ClientConnection;
  readonly ready: Promise<AcpProcess | Failure>;
}

function startProcess(sdk: AcpSdk, options: AcpAgentOptions): Starting {
  const { methods } = sdk;
  const name = options.command;
  // Its own process group, so close() also stops what the agent started.
  const { child, stderr } = spawnAgentProgram(options);
  child.stdin.on('error', () => {
    // EPIPE after the agent died; `died` reports it.
  });

  const died = new Promise<Failure>((resolve) => {
    child.on('error', (error: NodeJS.ErrnoException) => {
      resolve({ ok: false, kind: 'unreachable', error: `could not start the ACP agent "${name}": ${describeSpawnError(error, options.cwd)}` });
    });
    const report = (code: number | null, signal: NodeJS.Signals | null) => {
      resolve({ ok: false, kind: 'failed', error: `the ACP agent "${name}" ${describeExit(code, signal, stderr)}` });
    };
    // 'close' comes once stderr is complete, and stderr usually says why. But a
    // grandchild may hold the pipes open after the agent exits: then 'exit',
    // shortly after, is enough.
    child.once('close', report);
    child.once('exit', (code, signal) => setTimeout(() => report(code, signal), 200).unref());
  });

  const listeners = new Map<string, (update: SessionUpdate) => void>();
  const app = sdk
    .client({ name: 'homing' })
    .onNotification(methods.client.session.update, ({ params }) => {
      listeners.get(params.sessionId)?.(params.update);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => refusePermission(params));
  const connection = app.connect(
    sdk.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    ),
  );
  void died.then(() => connection.close());

  const ready = initialize(sdk, child, connection, died, options).then(async (failure) => {
    if ('images' in failure) return { child, connection, methods, sessions: new Map(), listeners, died, images: failure.images };
    connection.close();
    await stopProcessGroup(child, options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    return failure;
  });
  return { child, connection, ready };
}

/** `initialize`, within the start deadline: what the agent takes when it is ready, else why it is not. */
async function initialize(
  { methods, PROTOCOL_VERSION }: AcpSdk,
  child: ChildProcess,
  connection: ClientConnection,
  died: Promise<Failure>,
  options: AcpAgentOptions,
): Promise<Failure | { readonly images: boolean }> {
  const name = options.command;
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const initialized = connection.agent
    .request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      // No file system or terminal: a gateway has no editor for the agent to drive.
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'homing', version: options.clientVersion ?? '0.0.0' },
    })
    .then(
      (response): Failure | { readonly images: boolean } =>
        response.protocolVersion === PROTOCOL_VERSION
          ? { images: response.agentCapabilities?.promptCapabilities?.image === true }
          : { ok: false, kind: 'bad-response', error: `the ACP agent "${name}" speaks protocol version ${response.protocolVersion}; Homing speaks ${PROTOCOL_VERSION}` },
      (error: unknown) =>
        preferDeath(died, { ok: false, kind: 'bad-response', error: `the ACP agent "${name}" failed to initialize: ${describe(error)}` }),
    );
  const silent = delay(timeoutMs).then(
    (): Failure => ({ ok: false, kind: 'timeout', error: `the ACP agent "${name}" did not answer initialize within ${formatDuration(timeoutMs)}` }),
  );
  return Promise.race([initialized, died, firstLineNotJson(child, name), silent]);
}

/**
 * The SDK answers a line that is not JSON with a parse error and keeps waiting,
 * so a program that is not an ACP agent would only time out. Its first line
 * tells at once.
 */
function firstLineNotJson(child: ChildProcess, name: string): Promise<Failure> {
  return new Promise((resolve) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const line = seen.split('\n').find((l, i, all) => l.trim() !== '' && i < all.length - 1);
      if (line === undefined) return;
      child.stdout?.off('data', onData);
      try {
        JSON.parse(line);
      } catch {
        const excerpt = line.trim().slice(0, 80);
        resolve({ ok: false, kind: 'bad-response', error: `the program "${name}" does not speak ACP; it printed: ${excerpt}` });
      }
    };
    child.stdout?.on('data', onData);
  });
}

/** No one is there to approve a tool call in a gateway: always refuse. */
function refusePermission(params: RequestPermissionRequest): RequestPermissionResponse {
  const reject = params.options.find((o) => o.kind === 'reject_once') ?? params.options.find((o) => o.kind === 'reject_always');
  return reject ? { outcome: { outcome: 'selected', optionId: reject.optionId } } : { outcome: { outcome: 'cancelled' } };
}

async function runAcpTurn(proc: AcpProcess, options: AcpAgentOptions, turn: AgentTurn): Promise<AgentResult> {
  const { methods } = proc;
  const agent = proc.connection.agent;
  let sessionId = proc.sessions.get(turn.sessionId);
  const fresh = sessionId === undefined;
  if (sessionId === undefined) {
    const created = await untilAborted(
      Promise.race([
        agent
          .request(methods.agent.session.new, { cwd: options.sessionCwd ?? options.cwd ?? process.cwd(), mcpServers: [] })
          .then(
            (r) => r.sessionId,
            (error: unknown) =>
              preferDeath(proc.died, { ok: false, kind: 'failed', error: `the ACP agent refused a new session: ${describe(error)}` }),
          ),
        proc.died,
      ]),
      turn.signal,
    );
    if (created === ABORTED) return abortedResult(turn.signal);
    if (typeof created !== 'string') return created;
    sessionId = created;
    proc.sessions.set(turn.sessionId, sessionId);
  }

  let text = '';
  proc.listeners.set(sessionId, (update) => {
    if (update.sessionUpdate !== 'agent_message_chunk' || update.content.type !== 'text') return;
    text += update.content.text;
    turn.onToken(update.content.text);
  });
  try {
    const prompt: ContentBlock[] = [];
    if (turn.context?.summary && fresh) prompt.push({ type: 'text', text: summaryPreface(turn.context.summary) });
    if (fresh && turn.history.length > 0) prompt.push({ type: 'text', text: historyContext(turn.history) });
    // Every turn: where and when, and who writes (the agent keeps its own history, not Homing's context).
    if (turn.context) prompt.push({ type: 'text', text: contextLine(turn.context) });
    prompt.push({ type: 'text', text: turn.message.text });
    prompt.push(...imageBlocks(turn.message, proc.images));
    const answered = agent.request(methods.agent.session.prompt, { sessionId, prompt }).then(
      (response) => response.stopReason,
      (error: unknown) => preferDeath(proc.died, { ok: false, kind: 'failed', error: `the ACP agent answered with an error: ${describe(error)}` }),
    );
    const outcome = await untilAborted(Promise.race([answered, proc.died]), turn.signal);
    if (outcome === ABORTED) {
      const id = sessionId;
      await agent.notify(methods.agent.session.cancel, { sessionId: id }).catch(() => {});
      // The agent ends the prompt with `cancelled`; wait briefly so its late
      // updates do not leak into the next turn of this conversation.
      await Promise.race([answered, proc.died, delay(options.cancelGraceMs ?? 2_000)]);
      return abortedResult(turn.signal);
    }
    if (typeof outcome !== 'string') return outcome;
    switch (outcome) {
      case 'refusal':
        return { ok: false, kind: 'failed', error: 'the ACP agent refused to answer' };
      case 'cancelled':
        return { ok: false, kind: 'cancelled', error: 'the ACP agent cancelled the turn' };
      case 'end_turn':
      case 'max_tokens':
      case 'max_turn_requests':
        return text.trim() === ''
          ? { ok: false, kind: 'bad-response', error: 'the ACP agent finished without a reply' }
          : { ok: true, text };
    }
  } finally {
    proc.listeners.delete(sessionId);
  }
}

/** Homing's transcript, for an ACP session that has not seen this conversation. */
export function historyContext(history: readonly TurnMessage[]): string {
  const lines = history.map((m) => {
    const who = m.role === 'assistant' ? 'Assistant' : m.sender ? `User (${speakerLabel(m.sender)})` : 'User';
    // Quoted line by line: a message's text cannot start a line that looks like another speaker's.
    return `${who}:\n${quoteLines(m.text)}`;
  });
  return ['Earlier in this conversation (for context; reply only to the new message that follows):', ...lines].join('\n');
}

const ABORTED = Symbol('aborted');

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A request that failed because the process died ("connection closed") is
 * better explained by the exit code and stderr, which arrive a moment later.
 */
function preferDeath(died: Promise<Failure>, failure: Failure): Promise<Failure> {
  return Promise.race([died, delay(300).then(() => failure)]);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A message's images as ACP image content blocks (base64, with their type)
 * when the agent said it takes images; else one line saying they came.
 */
function imageBlocks(message: TurnMessage, takesImages: boolean): ContentBlock[] {
  const images = (message.attachments ?? []).filter((file) => file.kind === 'image');
  if (images.length === 0) return [];
  if (!takesImages) return [{ type: 'text', text: `[${images.length === 1 ? 'a photo came' : `${images.length} photos came`} with this message; this agent does not take images, so it is not shown]` }];
  return images.map((image): ContentBlock => {
    try {
      return { type: 'image', mimeType: image.mime, data: readFileSync(image.path).toString('base64') };
    } catch {
      return { type: 'text', text: '[an image that came with this message could not be read any more]' };
    }
  });
}
