import type { ChildProcess } from 'node:child_process';
import type { Agent, AgentResult, AgentTurn, ConversationContext, TurnMessage } from './agent.js';
import { DEFAULT_KILL_GRACE_MS, describeExit, spawnAgentProgram, stopProcessGroup, type AgentProgram } from './process-group.js';
import { describeSpawnError } from './spawn-error.js';
import { abortedResult } from './timeout.js';

/**
 * What a command agent reads on stdin, once, as one JSON document followed by a
 * newline (stdin is then closed):
 *
 *   { "version": 1,
 *     "sessionId": "s_…",                       Homing's session id
 *     "history": [ { "role": "user" | "assistant", "text": "…",
 *                    "sender"?: { "pseudonym": "…", "displayName"?: "…" } } ],
 *     "message":  { "role": "user", "text": "…", "sender"?: { … },
 *                   "attachments"?: [ { "kind", "path", "mime", "size", "name"? } ] },
 *     "context"?: { "platform", "chatKind", "chat", "chatTitle"?, "sender"?,
 *                   "localTime", "timeZone", "summary"?, "instructions"?, "route"? },
 *     "purpose"?: "reply" | "summarise" }
 *
 * The reply is everything the program writes to stdout, as UTF-8 text (trailing
 * whitespace trimmed); stdout is streamed to the UI as it arrives. stderr is
 * only used for error messages. Exit code 0 means success. See docs/agents.md.
 */
export interface CommandTurnInput {
  readonly version: 1;
  readonly sessionId: string;
  readonly history: readonly TurnMessage[];
  readonly message: TurnMessage;
  /** Who and where (see ConversationContext); absent only when the caller has none. */
  readonly context?: ConversationContext | undefined;
  /** `summarise`: condense the history into a summary instead of replying (the message says so). */
  readonly purpose?: 'reply' | 'summarise' | undefined;
}

export interface CommandAgentOptions extends AgentProgram {
  /** Between SIGTERM and SIGKILL when the turn is cancelled or times out. */
  readonly killGraceMs?: number | undefined;
  /** stdout beyond this is cut off and the program stopped. */
  readonly maxOutputBytes?: number | undefined;
}

export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

export function createCommandAgent(options: CommandAgentOptions): Agent {
  const running = new Set<ChildProcess>();
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  return {
    kind: 'command',
    async runTurn(turn) {
      try {
        return await runCommandTurn(options, grace, turn, running);
      } catch (error) {
        return { ok: false, kind: 'failed', error: `the command agent failed: ${String(error)}` };
      }
    },
    async close() {
      await Promise.all([...running].map((child) => stopProcessGroup(child, grace)));
    },
  };
}

function runCommandTurn(options: CommandAgentOptions, grace: number, turn: AgentTurn, running: Set<ChildProcess>): Promise<AgentResult> {
  if (turn.signal.aborted) return Promise.resolve(abortedResult(turn.signal));
  const name = options.command;
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;

  return new Promise((resolve) => {
    // Its own process group, so a timeout or cancel can stop the whole tree it started.
    const { child, stderr } = spawnAgentProgram(options);
    running.add(child);
    // fatal: invalid UTF-8 is binary output, reported, not passed on as mojibake.
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let text = '';
    let bytes = 0;
    let settled = false;
    /** The result was decided before the program ended (cancel, binary, too long). */
    let decided = false;

    const finish = (result: AgentResult): void => {
      if (settled) return;
      settled = true;
      running.delete(child);
      turn.signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    /** Decided before the program ended: stop it first, so nothing outlives the turn. */
    const stopWith = (result: AgentResult): void => {
      if (settled || decided) return;
      decided = true;
      child.stdout.removeAllListeners('data');
      void stopProcessGroup(child, grace).then(() => finish(result));
    };
    const onAbort = (): void => stopWith(abortedResult(turn.signal));
    turn.signal.addEventListener('abort', onAbort, { once: true });

    child.on('error', (error: NodeJS.ErrnoException) => {
      finish({ ok: false, kind: 'unreachable', error: `could not start the command "${name}": ${describeSpawnError(error, options.cwd)}` });
    });
    child.stdin.on('error', () => {
      // EPIPE: the program exited without reading its input; its exit code tells the story.
    });
    child.stdout.on('data', (chunk: Buffer) => {
      const room = maxBytes - bytes;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      bytes += part.length;
      let piece: string;
      try {
        piece = decoder.decode(part, { stream: part === chunk });
      } catch {
        piece = '\0';
      }
      if (piece.includes('\0')) {
        stopWith({ ok: false, kind: 'bad-response', error: `the command "${name}" printed binary data, not text` });
        return;
      }
      text += piece;
      if (piece) turn.onToken(piece);
      if (part !== chunk) {
        const note = `\n\n[reply cut: the command printed more than ${Math.round(maxBytes / 1024)} KiB]`;
        stopWith({ ok: true, text: text.trimEnd() + note });
      }
    });
    child.on('close', (code, signal) => {
      if (settled || decided) return;
      // A child killed from outside ends like this too; close() during a turn, for one.
      if (turn.signal.aborted) return finish(abortedResult(turn.signal));
      if (signal || code !== 0) return finish({ ok: false, kind: 'failed', error: `the command "${name}" ${describeExit(code, signal, stderr)}` });
      const tail = stderr.text();
      const detail = tail ? `: ${tail}` : '';
      try {
        text += decoder.decode();
      } catch {
        return finish({ ok: false, kind: 'bad-response', error: `the command "${name}" printed binary data, not text` });
      }
      const reply = text.trimEnd();
      if (reply.trim() === '') {
        return finish({ ok: false, kind: 'bad-response', error: `the command "${name}" printed nothing on stdout${detail}` });
      }
      finish({ ok: true, text: reply });
    });

    const input: CommandTurnInput = {
      version: 1,
      sessionId: turn.sessionId,
      history: turn.history,
      message: turn.message,
      ...(turn.context ? { context: turn.context } : {}),
      ...(turn.purpose ? { purpose: turn.purpose } : {}),
    };
    child.stdin.end(JSON.stringify(input) + '\n');
  });
}
