import { copyFileSync, existsSync, readFileSync, statSync, unwatchFile, watchFile } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { ConfigView } from '../../../shared/api';
import type { Logger } from '../logger';
import { parseConfigText, parseConfigValue, writeConfigFile, type ConfigResult } from './load';
import type { z } from 'zod';

/** Applies a configuration to the running gateway; awaited before the next one is applied. */
export type ConfigListener<Config> = (config: Config, error: string | null) => void | Promise<void>;

/** Why a save from the window was refused without writing anything. */
export type ConfigWriteResult<Config> = ConfigResult<Config> | { readonly ok: false; readonly error: string; readonly conflict: true };

export interface ConfigServiceOptions<Config> {
  /** What a valid file is (homing-config.ts: the sections and every platform's); `{}` parsed by it is the embedded default. */
  readonly schema: z.ZodType<Config>;
  /**
   * How long a reload waits before reading again a file that is empty or not
   * JSON: an editor saving in place truncates first and writes after, and the
   * watcher may look in between. Default 300 ms.
   */
  readonly settleMs?: number;
}

/** What the file on disk holds right now. */
type FileState<Config> =
  | { readonly kind: 'missing' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'unreadable'; readonly error: string }
  | { readonly kind: 'not-json'; readonly error: string }
  | { readonly kind: 'invalid'; readonly error: string }
  | { readonly kind: 'valid'; readonly config: Config; readonly written: Record<string, unknown> };

/**
 * The configuration in force. A file that fails validation never replaces a
 * good one: at start the embedded defaults run (and the error is shown); on a
 * reload the last good config stays in force.
 *
 * Changes are applied one at a time: each call of the listener is awaited
 * before the next starts, so "enable IRC, then disable it" always ends with IRC
 * stopped, whatever the timing. `applied()` resolves once everything queued so
 * far is in force.
 */
export class ConfigService<Config> {
  private readonly schema: z.ZodType<Config>;
  /** The embedded defaults: what an empty or missing file means. */
  private readonly defaults: Config;
  private config: Config;
  /** The last valid file's own keys (no defaults filled in): what forms patch, so defaults stay implicit. */
  private written: Record<string, unknown> = {};
  private error: string | null = null;
  private watching = false;
  private queue: Promise<void> = Promise.resolve();
  private readonly settleMs: number;

  constructor(
    readonly file: string,
    private readonly logger: Logger,
    private readonly onChange: ConfigListener<Config>,
    options: ConfigServiceOptions<Config>,
  ) {
    this.schema = options.schema;
    this.defaults = options.schema.parse({});
    this.config = this.defaults;
    this.settleMs = options.settleMs ?? 300;
    // At start an empty file means the embedded defaults (nothing was in force before it).
    const state = this.readFile();
    if (state.kind === 'valid') {
      this.config = state.config;
      this.written = state.written;
    } else if (state.kind !== 'missing' && state.kind !== 'empty') this.fail(state.error, 'running on the embedded defaults');
  }

  get current(): Config {
    return this.config;
  }

  get lastError(): string | null {
    return this.error;
  }

  view(secretsSet: readonly string[], suggestion: ConfigView['suggestion'] = null): ConfigView {
    return { path: this.file, config: this.config, written: this.written, error: this.error, secretsSet, suggestion };
  }

  /**
   * Re-reads the file; an invalid one leaves the current config in force. An
   * empty file, or one cut off mid-write, is read again after `settleMs`; still
   * empty, it is ignored (the last good config stays: delete the file to go
   * back to the defaults), still broken, it is reported.
   */
  async reload(): Promise<void> {
    let state = this.readFile();
    if (state.kind === 'empty' || state.kind === 'not-json') {
      await new Promise((resolve) => setTimeout(resolve, this.settleMs));
      state = this.readFile();
    }
    switch (state.kind) {
      case 'valid':
        this.written = state.written;
        return this.adopt(state.config);
      case 'missing':
        this.written = {};
        return this.adopt(this.defaults);
      case 'empty':
        this.logger.info(`${this.file} is empty: keeping the configuration in force (delete the file to use the defaults)`);
        return this.applied();
      case 'unreadable':
      case 'not-json':
      case 'invalid':
        this.fail(state.error, 'keeping the last good configuration');
        return this.enqueue(this.config, this.error);
    }
  }

  /**
   * Validates and writes a new config (from the window), then applies it and
   * resolves once it is in force. Nothing is written when the new config is
   * invalid, and nothing when the file holds edits made by hand that the
   * window has not seen (a file with an error, or one changed since it was
   * read): those are never overwritten silently.
   */
  async write(input: unknown): Promise<ConfigWriteResult<Config>> {
    const result = parseConfigValue(input, this.schema, 'config');
    if (!result.ok) return result;
    const onDisk = this.readFile();
    switch (onDisk.kind) {
      case 'unreadable':
      case 'not-json':
      case 'invalid':
        return {
          ok: false,
          conflict: true,
          error: `not saved: ${this.file} has an error, and saving would overwrite the edits made to it by hand. Fix or delete the file, then save again (${onDisk.error})`,
        };
      case 'valid':
        if (!isDeepStrictEqual(onDisk.config, this.config)) {
          this.written = onDisk.written;
          await this.adopt(onDisk.config);
          return {
            ok: false,
            conflict: true,
            error: `not saved: ${this.file} was changed by hand since the window read it; its settings are now in force, so look at them and save again`,
          };
        }
        break;
      case 'missing':
      case 'empty':
        break;
    }
    writeConfigFile(this.file, input);
    this.written = input as Record<string, unknown>;
    await this.adopt(result.value);
    return result;
  }

  /**
   * Replaces a file that has an error (the user chose to, in the window): its
   * bytes are first copied to `config.json.<timestamp>.bak` beside it, so no
   * hand edit is ever lost. `at` names the backup (injected clock).
   */
  async replace(input: unknown, at: Date): Promise<ConfigWriteResult<Config> & { backup?: string }> {
    const result = parseConfigValue(input, this.schema, 'config');
    if (!result.ok) return result;
    let backup: string | undefined;
    if (existsSync(this.file)) {
      backup = `${this.file}.${at.toISOString().replace(/[:.]/g, '-')}.bak`;
      copyFileSync(this.file, backup);
    }
    writeConfigFile(this.file, input);
    this.written = input as Record<string, unknown>;
    await this.adopt(result.value);
    return backup === undefined ? result : { ...result, backup };
  }

  /** Runs `task` in the queue of config changes (after every change queued before it). */
  serialized(task: () => void | Promise<void>): Promise<void> {
    const run = this.queue.then(task).catch((error: unknown) => this.logger.error('applying the configuration failed', { error }));
    this.queue = run;
    return run;
  }

  /** Resolves once every change queued so far has been applied. */
  applied(): Promise<void> {
    return this.queue;
  }

  /** Picks up edits made to the file by hand (polling: works on every file system). */
  watch(intervalMs = 2_000): void {
    if (this.watching) return;
    this.watching = true;
    watchFile(this.file, { interval: intervalMs, persistent: false }, (now, before) => {
      if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) void this.reload();
    });
  }

  unwatch(): void {
    if (this.watching) unwatchFile(this.file);
    this.watching = false;
  }

  exists(): boolean {
    return existsSync(this.file) && statSync(this.file).isFile();
  }

  private readFile(): FileState<Config> {
    let text: string;
    try {
      if (!existsSync(this.file)) return { kind: 'missing' };
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      return { kind: 'unreadable', error: `${this.file}: cannot be read (${(error as Error).message})` };
    }
    if (text.trim() === '') return { kind: 'empty' };
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      // parseConfigText words the JSON error with its line and column.
      const described = parseConfigText(text, this.schema, this.file);
      return { kind: 'not-json', error: described.ok ? `${this.file}: not valid JSON` : described.error };
    }
    const result = parseConfigValue(raw, this.schema, this.file);
    return result.ok ? { kind: 'valid', config: result.value, written: raw as Record<string, unknown> } : { kind: 'invalid', error: result.error };
  }

  private adopt(config: Config): Promise<void> {
    const changed = !isDeepStrictEqual(config, this.config);
    const hadError = this.error !== null;
    this.config = config;
    this.error = null;
    if (!changed && !hadError) return this.applied();
    this.logger.info('configuration applied', { file: this.file });
    return this.enqueue(config, null);
  }

  private enqueue(config: Config, error: string | null): Promise<void> {
    return this.serialized(() => this.onChange(config, error));
  }

  private fail(error: string, consequence: string): void {
    this.error = error;
    this.logger.error(`invalid configuration, ${consequence}: ${error}`);
  }
}
