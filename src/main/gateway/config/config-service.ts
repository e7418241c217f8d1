import { existsSync, statSync, unwatchFile, watchFile } from 'node:fs';
import type { ConfigView } from '../../../shared/api';
import type { Logger } from '../logger';
import { loadConfigFile, parseConfigText, writeConfigFile, type ConfigResult } from './load';
import { DEFAULT_CONFIG, homingConfigSchema, type HomingConfig } from './schema';

/**
 * The configuration in force. A file that fails validation never replaces a
 * good one: at start the embedded defaults run (and the error is shown); on a
 * reload the last good config stays in force.
 */
export class ConfigService {
  private config: HomingConfig = DEFAULT_CONFIG;
  private error: string | null = null;
  private watching = false;

  constructor(
    readonly file: string,
    private readonly logger: Logger,
    private readonly onChange: (config: HomingConfig, error: string | null) => void,
  ) {
    const result = loadConfigFile(file, homingConfigSchema);
    if (result.ok) this.config = result.value;
    else this.fail(result.error, 'running on the embedded defaults');
  }

  get current(): HomingConfig {
    return this.config;
  }

  get lastError(): string | null {
    return this.error;
  }

  view(secretsSet: readonly string[], suggestion: ConfigView['suggestion'] = null): ConfigView {
    return { path: this.file, config: this.config, error: this.error, secretsSet, suggestion };
  }

  /** Re-reads the file; an invalid one leaves the current config in force. */
  reload(): void {
    const result = loadConfigFile(this.file, homingConfigSchema);
    if (!result.ok) {
      this.fail(result.error, 'keeping the last good configuration');
      this.onChange(this.config, this.error);
      return;
    }
    this.adopt(result.value);
  }

  /** Validates and writes a new config (from the window). Nothing is written when it is invalid. */
  write(input: unknown): ConfigResult<HomingConfig> {
    const result = parseConfigText(JSON.stringify(input), homingConfigSchema, 'config');
    if (!result.ok) return result;
    writeConfigFile(this.file, input);
    this.adopt(result.value);
    return result;
  }

  /** Picks up edits made to the file by hand (polling: works on every file system). */
  watch(intervalMs = 2_000): void {
    if (this.watching) return;
    this.watching = true;
    watchFile(this.file, { interval: intervalMs, persistent: false }, (now, before) => {
      if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) this.reload();
    });
  }

  unwatch(): void {
    if (this.watching) unwatchFile(this.file);
    this.watching = false;
  }

  exists(): boolean {
    return existsSync(this.file) && statSync(this.file).isFile();
  }

  private adopt(config: HomingConfig): void {
    const changed = JSON.stringify(config) !== JSON.stringify(this.config);
    const hadError = this.error !== null;
    this.config = config;
    this.error = null;
    if (changed || hadError) {
      this.logger.info('configuration applied', { file: this.file });
      this.onChange(this.config, null);
    }
  }

  private fail(error: string, consequence: string): void {
    this.error = error;
    this.logger.error(`invalid configuration, ${consequence}: ${error}`);
  }
}
