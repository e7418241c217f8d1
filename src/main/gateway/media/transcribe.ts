import type { ChildProcess } from 'node:child_process';
import { openAsBlob } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { z } from 'zod';
import { openAiAgentConfigSchema } from '../agents/config-schema';
import { displayUrl } from '../agents/openai';
import { serverMessage } from '../agents/openai-errors';
import { DEFAULT_KILL_GRACE_MS, describeExit, spawnAgentProgram, stopProcessGroup, type ProcessTracker } from '../agents/process-group';
import { describeSpawnError } from '../agents/spawn-error';
import { formatDuration } from '../agents/timeout';
import { readBodyLimited } from '../http-body';
import { networkCause } from '../network-cause';

/**
 * Voice notes to text, with a speech-to-text engine the user runs: an
 * OpenAI-compatible transcription endpoint (whisper.cpp's server started with
 * `--inference-path /v1/audio/transcriptions`, speaches / faster-whisper,
 * LocalAI, or OpenAI itself), or a local program that prints the transcript
 * (`whisper-cli -m model.bin -f {file} -nt -np`).
 *
 * transcribe never throws: every failure is a sentence the agent and the user
 * are shown instead of the transcript. An empty transcript is a success (the
 * caller says "no speech heard"), not an error.
 */

export const FILE_PLACEHOLDER = '{file}';

const timeoutMs = z.number().int().min(1_000).max(3_600_000).optional();

export const openAiSpeechConfigSchema = z.strictObject({
  type: z.literal('openai'),
  /** The transcription endpoint itself, not a base URL: servers differ in where they put it. */
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL, like http://127.0.0.1:8080/v1/audio/transcriptions' }),
  model: z.string().min(1, { error: 'must name a model, like whisper-1' }).optional(),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/, { error: 'must be a language code, like en or de' })
    .optional(),
  /** The same rule as the agent's: a variable named like a key, never the key itself. */
  apiKeyEnv: openAiAgentConfigSchema.shape.apiKeyEnv,
  timeoutMs,
  apiKey: openAiAgentConfigSchema.shape.apiKey,
});

export const commandSpeechConfigSchema = z.strictObject({
  type: z.literal('command'),
  command: z.string().min(1, { error: 'must name a program, like whisper-cli' }),
  /** `{file}` in an argument is replaced by the audio file's path; one argument must carry it. */
  args: z.array(z.string()).refine((args) => args.some((arg) => arg.includes(FILE_PLACEHOLDER)), {
    error: 'one argument must contain {file}, where the audio file’s path goes, like ["-f", "{file}"]',
  }),
  cwd: z.string().optional(),
  timeoutMs,
});

export const speechConfigSchema = z.discriminatedUnion('type', [openAiSpeechConfigSchema, commandSpeechConfigSchema]);

/** As validated. */
export type SpeechConfig = z.output<typeof speechConfigSchema>;
export type OpenAiSpeechConfig = z.output<typeof openAiSpeechConfigSchema>;
export type CommandSpeechConfig = z.output<typeof commandSpeechConfigSchema>;

export const DEFAULT_SPEECH_MODEL = 'whisper-1';
/** A few minutes of speech on a CPU with a larger model takes a while; a hung engine must not hold the message forever. */
export const DEFAULT_SPEECH_TIMEOUT_MS = 300_000;
/** A transcript is text: a megabyte is hours of speech, so more is a misbehaving engine. */
export const MAX_TRANSCRIPT_BYTES = 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export type SpeechResult = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly error: string };

export interface AudioFile {
  /** The fetched file (its extension follows its checked type). */
  readonly path: string;
  readonly mime: string;
  /** As the sender named it; sent as the upload's file name only when it has an extension. */
  readonly name?: string | undefined;
}

export interface TranscribeOptions {
  /** The caller's cancel; the config's `timeoutMs` is applied on top of it. */
  readonly signal: AbortSignal;
  /** Where `apiKeyEnv` is looked up (default process.env). */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** Told of a command engine's process, so one left behind by a crash is killed at the next start. */
  readonly tracker?: ProcessTracker | undefined;
  /** Between SIGTERM and SIGKILL when a command engine is stopped. */
  readonly killGraceMs?: number | undefined;
}

export async function transcribe(file: AudioFile, config: SpeechConfig, options: TranscribeOptions): Promise<SpeechResult> {
  if (options.signal.aborted) return { ok: false, error: 'the transcription was cancelled' };
  const limitMs = config.timeoutMs ?? DEFAULT_SPEECH_TIMEOUT_MS;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), limitMs);
  const signal = AbortSignal.any([options.signal, deadline.signal]);
  /** Why the signal fired, in words: the deadline or the caller. */
  const stopped = (): string =>
    deadline.signal.aborted ? `the speech-to-text engine did not answer within ${formatDuration(limitMs)}` : 'the transcription was cancelled';
  try {
    switch (config.type) {
      case 'openai':
        return await transcribeOverHttp(file, config, signal, stopped, options.env ?? process.env);
      case 'command':
        return await transcribeWithCommand(file, config, signal, stopped, options);
    }
  } catch (error) {
    // Not expected (every path returns its failures); a bug must not become an unhandled rejection.
    return { ok: false, error: `the transcription failed: ${String(error)}` };
  } finally {
    clearTimeout(timer);
  }
}

async function transcribeOverHttp(
  file: AudioFile,
  config: OpenAiSpeechConfig,
  signal: AbortSignal,
  stopped: () => string,
  env: NodeJS.ProcessEnv,
): Promise<SpeechResult> {
  const where = displayUrl(config.url);
  const apiKey = config.apiKeyEnv ? env[config.apiKeyEnv] || undefined : undefined;
  let audio: Blob;
  try {
    // stat first: openAsBlob reports a missing file as an invalid argument, not ENOENT.
    await stat(file.path);
    audio = await openAsBlob(file.path, { type: file.mime });
  } catch (error) {
    return { ok: false, error: `the voice note could not be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
  const form = new FormData();
  form.append('file', audio, uploadName(file));
  form.append('model', config.model ?? DEFAULT_SPEECH_MODEL);
  form.append('response_format', 'json');
  if (config.language) form.append('language', config.language);

  let response: Response;
  try {
    response = await fetch(config.url, {
      method: 'POST',
      body: form,
      headers: { accept: 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      signal,
    });
  } catch (error) {
    if (signal.aborted) return { ok: false, error: stopped() };
    return { ok: false, error: `could not reach the speech-to-text server at ${where} (${networkCause(error) ?? 'no answer'})` };
  }

  let body: string | undefined;
  try {
    body = await readBodyLimited(response, response.ok ? MAX_TRANSCRIPT_BYTES : MAX_ERROR_BODY_BYTES);
  } catch (error) {
    if (signal.aborted) return { ok: false, error: stopped() };
    return { ok: false, error: `the connection to ${where} broke while it answered (${networkCause(error) ?? String(error)})` };
  }
  if (!response.ok) {
    const detail = body ? serverMessage(body, { apiKey }) : '';
    return { ok: false, error: `the speech-to-text server at ${where} answered HTTP ${response.status}${httpHint(response.status)}${detail ? `: ${detail}` : ''}` };
  }
  if (body === undefined) return { ok: false, error: `the speech-to-text server at ${where} sent more than ${MAX_TRANSCRIPT_BYTES / 1024 / 1024} MB` };
  return transcriptFromJson(body, where, apiKey);
}

function httpHint(status: number): string {
  if (status === 401 || status === 403) return ' (the API key was refused or is missing)';
  if (status === 404) return ' (not found: check the URL, e.g. …/v1/audio/transcriptions)';
  if (status === 413) return ' (the voice note is too large for it)';
  if (status === 429) return ' (rate-limited)';
  return '';
}

/**
 * `{ "text": "…" }`. whisper.cpp's server answers some failures (a file it cannot
 * read without `--convert`) with status 200 and `{ "error": "…" }`, so an error
 * field without text is a failure whatever the status said.
 */
function transcriptFromJson(body: string, where: string, apiKey: string | undefined): SpeechResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const excerpt = serverMessage(body, { apiKey }).slice(0, 80);
    return { ok: false, error: `the speech-to-text server at ${where} did not answer with JSON${excerpt ? ` (it said: ${excerpt})` : ''}` };
  }
  const text = parsed && typeof parsed === 'object' ? (parsed as { text?: unknown }).text : undefined;
  if (typeof text === 'string') return { ok: true, text: text.trim() };
  if (parsed && typeof parsed === 'object' && 'error' in parsed) {
    return { ok: false, error: `the speech-to-text server at ${where} failed: ${serverMessage(body, { apiKey })}` };
  }
  return { ok: false, error: `the speech-to-text server at ${where} answered JSON without a "text" field` };
}

/** OpenAI-compatible servers tell the format from the upload's file-name extension, which the stored file always has. */
function uploadName(file: AudioFile): string {
  const given = file.name ? basename(file.name.replace(/\\/g, '/')) : '';
  return given && extname(given) ? given : basename(file.path);
}

function transcribeWithCommand(
  file: AudioFile,
  config: CommandSpeechConfig,
  signal: AbortSignal,
  stopped: () => string,
  options: TranscribeOptions,
): Promise<SpeechResult> {
  const name = config.command;
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  return new Promise((resolve) => {
    let child: ChildProcess & { stdout: NodeJS.ReadableStream };
    let stderr: ReturnType<typeof spawnAgentProgram>['stderr'];
    try {
      ({ child, stderr } = spawnAgentProgram({
        command: config.command,
        args: config.args.map((arg) => arg.split(FILE_PLACEHOLDER).join(file.path)),
        cwd: config.cwd,
        tracker: options.tracker,
      }));
    } catch (error) {
      resolve({ ok: false, error: `could not start the speech-to-text command "${name}": ${String(error)}` });
      return;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    /** The result was decided before the program ended (cancel, timeout, too much output): it is being stopped. */
    let decided = false;

    const finish = (result: SpeechResult): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const stopWith = (result: SpeechResult): void => {
      if (settled || decided) return;
      decided = true;
      child.stdout.removeAllListeners('data');
      void stopProcessGroup(child, grace).then(() => finish(result));
    };
    const onAbort = (): void => stopWith({ ok: false, error: stopped() });
    signal.addEventListener('abort', onAbort, { once: true });

    child.on('error', (error: NodeJS.ErrnoException) => {
      finish({ ok: false, error: `could not start the speech-to-text command "${name}": ${describeSpawnError(error, config.cwd)}` });
    });
    // The transcript comes from the file named in the arguments; stdin is not used.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end();
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_TRANSCRIPT_BYTES) {
        stopWith({ ok: false, error: `the speech-to-text command "${name}" printed more than ${MAX_TRANSCRIPT_BYTES / 1024 / 1024} MB` });
        return;
      }
      chunks.push(chunk);
    });
    child.on('close', (code, exitSignal) => {
      if (settled || decided) return;
      if (signal.aborted) return finish({ ok: false, error: stopped() });
      if (exitSignal || code !== 0) return finish({ ok: false, error: `the speech-to-text command "${name}" ${describeExit(code, exitSignal, stderr)}` });
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
      } catch {
        text = '\0';
      }
      if (text.includes('\0')) return finish({ ok: false, error: `the speech-to-text command "${name}" printed binary data, not text` });
      finish({ ok: true, text: text.trim() });
    });
  });
}

/**
 * Whether the engine answers: transcribes half a second of silence (a WAV built
 * here, so no sample file ships) and says ok or why not. For the setup screen;
 * what silence transcribes to (`''`, `[BLANK_AUDIO]`) does not matter.
 */
export async function probeSpeech(config: SpeechConfig, options: TranscribeOptions): Promise<SpeechResult> {
  let dir: string | undefined;
  try {
    dir = await mkdtemp(join(tmpdir(), 'homing-speech-probe-'));
    const path = join(dir, 'probe.wav');
    await writeFile(path, silentWav(0.5));
    return await transcribe({ path, mime: 'audio/wav', name: 'probe.wav' }, config, options);
  } catch (error) {
    return { ok: false, error: `the test recording could not be written: ${String(error)}` };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** A RIFF/WAVE file of `seconds` of silence: 16 kHz, mono, 16-bit PCM (what whisper.cpp reads without conversion). */
export function silentWav(seconds: number, sampleRate = 16_000): Buffer {
  const dataBytes = Math.round(seconds * sampleRate) * 2;
  const wav = Buffer.alloc(44 + dataBytes);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + dataBytes, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28); // byte rate
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataBytes, 40);
  return wav;
}
