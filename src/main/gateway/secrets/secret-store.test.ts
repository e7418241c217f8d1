import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLineLogger, silentLogger } from '../logger';
import { FileSecretStore, maskSecret } from './secret-store';

describe('FileSecretStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'homing-secrets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps secrets across restarts in a file only the user can read', () => {
    new FileSecretStore(dir, silentLogger).set('agent.apiKey', 'sk-live-123456789');
    const again = new FileSecretStore(dir, silentLogger);
    expect(again.get('agent.apiKey')).toBe('sk-live-123456789');
    expect(again.names()).toEqual(['agent.apiKey']);
    expect(statSync(join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
    again.delete('agent.apiKey');
    expect(new FileSecretStore(dir, silentLogger).get('agent.apiKey')).toBeUndefined();
  });

  it('moves an unreadable file aside instead of losing it, and logs no secret', () => {
    writeFileSync(join(dir, 'secrets.json'), '{"agent.apiKey": "sk-half');
    const lines: string[] = [];
    const store = new FileSecretStore(dir, createLineLogger({ write: (line) => lines.push(line) }));
    expect(store.names()).toEqual([]);
    const aside = readdirSync(dir).find((name) => name.startsWith('secrets.json.unreadable-'));
    expect(aside).toBeDefined();
    expect(readFileSync(join(dir, aside!), 'utf8')).toContain('sk-half');
    expect(existsSync(join(dir, 'secrets.json'))).toBe(false);
    expect(lines.join('\n')).toMatch(/could not be read/);
    expect(lines.join('\n')).not.toMatch(/sk-half/);
  });

  it('masks a secret for display', () => {
    expect(maskSecret('sk-abcdefghijklmnop')).toBe('sk-…mnop');
    expect(maskSecret('short')).toBe('••••');
  });
});
