import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger';
import { ConfigService } from './config-service';
import { homingConfigSchema, type HomingConfig } from '../homing-config';

let dir: string;
let file: string;
let applied: { maxConcurrentTurns: number; error: string | null }[];
const open = (listener?: (config: HomingConfig, error: string | null) => void | Promise<void>) =>
  new ConfigService<HomingConfig>(file, silentLogger, listener ?? ((config, error) => void applied.push({ maxConcurrentTurns: config.maxConcurrentTurns, error })), {
    schema: homingConfigSchema,
    settleMs: 20,
  });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'homing-config-'));
  file = join(dir, 'config.json');
  applied = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('saving from the window', () => {
  it('writes nothing when any part is invalid, so the next start still runs on the file', async () => {
    writeFileSync(file, '{ "maxConcurrentTurns": 3 }\n');
    const service = open();
    const before = readFileSync(file, 'utf8');
    for (const input of [
      { sessions: { identityLinks: { a: ['abc'] } } },
      { sessions: { identityLinks: { alice: ['irc:x'], bob: ['irc:x'] } } },
      JSON.parse('{ "maxConcurrentTurns": 2, "__proto__": { "maxConcurrentTurns": 64 } }'),
      { maxConcurrentTurns: 0 },
    ]) {
      expect(await service.write(input)).toMatchObject({ ok: false });
      expect(readFileSync(file, 'utf8')).toBe(before);
      expect(service.current.maxConcurrentTurns).toBe(3);
    }
    expect(applied).toEqual([]);
  });

  it('refuses a __proto__ key by name instead of dropping it', async () => {
    const service = open();
    const result = await service.write(JSON.parse('{ "sessions": { "identityLinks": { "__proto__": ["irc:alice"] } } }'));
    expect(result).toEqual({
      ok: false,
      error: expect.stringMatching(/^config: sessions\.identityLinks\.__proto__: "__proto__" is not allowed as a key/),
    });
  });

  it('answers 10 000 levels of nesting with a clear error, not a stack overflow', async () => {
    const service = open();
    let deep: unknown = {};
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const result = await service.write({ sessions: deep });
    expect(result).toEqual({ ok: false, error: expect.stringMatching(/^config: sessions\.a\.a.*: nested more than 16 levels deep/) });
  });

  it('never overwrites a file with a hand-made error: it says so and writes nothing', async () => {
    writeFileSync(file, '{ "maxConcurrentTurns": 3 }\n');
    const service = open();
    writeFileSync(file, '{ "maxConcurrentTurns": 3, "colour": "blue" }\n');
    const result = await service.write({ maxConcurrentTurns: 5 });
    expect(result).toMatchObject({ ok: false, conflict: true, error: expect.stringMatching(/has an error, and saving would overwrite the edits made to it by hand.*colour/) });
    expect(readFileSync(file, 'utf8')).toContain('colour');
  });

  it('replaces a file with an error only when asked, copying it to a timestamped backup first', async () => {
    writeFileSync(file, '{ "maxConcurrentTurns": 3 }\n');
    const service = open();
    writeFileSync(file, '{ "maxConcurrentTurns": 3, oops }\n');
    await service.reload();
    expect(await service.write({ maxConcurrentTurns: 4 })).toMatchObject({ ok: false, conflict: true });
    const result = await service.replace({ maxConcurrentTurns: 4 }, new Date('2026-12-01T21:30:00.123Z'));
    expect(result).toMatchObject({ ok: true, backup: `${file}.2026-12-01T21-30-00-123Z.bak` });
    expect(readFileSync(`${file}.2026-12-01T21-30-00-123Z.bak`, 'utf8')).toBe('{ "maxConcurrentTurns": 3, oops }\n');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ maxConcurrentTurns: 4 });
    expect(service.current.maxConcurrentTurns).toBe(4);
  });

  it('shows forms what the file itself says, without the defaults filled in', () => {
    writeFileSync(file, '{ "maxConcurrentTurns": 3 }\n');
    const view = open().view([]);
    expect(view.written).toEqual({ maxConcurrentTurns: 3 });
    expect(Object.keys(view.config as object).length).toBeGreaterThan(1);
  });

  it('never overwrites hand edits it has not seen: it takes them and asks for a second save', async () => {
    writeFileSync(file, '{ "maxConcurrentTurns": 3 }\n');
    const service = open();
    writeFileSync(file, '{ "maxConcurrentTurns": 7 }\n');
    const result = await service.write({ maxConcurrentTurns: 5 });
    expect(result).toMatchObject({ ok: false, conflict: true, error: expect.stringMatching(/was changed by hand since the window read it/) });
    expect(service.current.maxConcurrentTurns).toBe(7);
    expect(await service.write({ maxConcurrentTurns: 5 })).toMatchObject({ ok: true });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ maxConcurrentTurns: 5 });
    expect(applied.map((change) => change.maxConcurrentTurns)).toEqual([7, 5]);
  });

  it('resolves only once the listener has applied the change', async () => {
    let finished = false;
    const service = open(async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      finished = true;
    });
    await service.write({ maxConcurrentTurns: 2 });
    expect(finished).toBe(true);
  });
});

describe('applying changes', () => {
  it('runs them one at a time, in order, each awaited before the next starts', async () => {
    const log: string[] = [];
    let running = 0;
    const service = open(async (config) => {
      running++;
      expect(running).toBe(1);
      log.push(`start ${config.maxConcurrentTurns}`);
      // The first change is the slowest: unserialized, the later ones would finish before it.
      await new Promise((resolve) => setTimeout(resolve, 40 - config.maxConcurrentTurns * 10));
      log.push(`end ${config.maxConcurrentTurns}`);
      running--;
    });
    const writes = [1, 2, 3].map((turns) => service.write({ maxConcurrentTurns: turns }));
    await Promise.all(writes);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    expect(service.current.maxConcurrentTurns).toBe(3);
  });

  it('keeps going after a listener that throws', async () => {
    let calls = 0;
    const service = open(() => {
      calls++;
      if (calls === 1) throw new Error('boom');
    });
    await service.write({ maxConcurrentTurns: 2 });
    await service.write({ maxConcurrentTurns: 3 });
    expect(calls).toBe(2);
  });
});

describe('reloading a file edited by hand', () => {
  it('ignores an empty file seen mid-save: the last good config stays, with no error', async () => {
    writeFileSync(file, '{ "maxConcurrentTurns": 3 }\n');
    const service = open();
    writeFileSync(file, '');
    await service.reload();
    expect(service.current.maxConcurrentTurns).toBe(3);
    expect(service.lastError).toBeNull();
    expect(applied).toEqual([]);
  });

  it('reads a half-written file again and takes the finished one', async () => {
    writeFileSync(file, '{ "maxConcurrentTurns": 3 }\n');
    const service = open();
    writeFileSync(file, '{ "maxConcurrentTu');
    const reloading = service.reload();
    setTimeout(() => writeFileSync(file, '{ "maxConcurrentTurns": 6 }\n'), 5);
    await reloading;
    expect(service.current.maxConcurrentTurns).toBe(6);
    expect(applied).toEqual([{ maxConcurrentTurns: 6, error: null }]);
  });

  it('reports a file that stays broken, and keeps the last good config', async () => {
    writeFileSync(file, '{ "maxConcurrentTurns": 3 }\n');
    const service = open();
    writeFileSync(file, '{ "maxConcurrentTurns": ');
    await service.reload();
    expect(service.current.maxConcurrentTurns).toBe(3);
    expect(service.lastError).toMatch(/not valid JSON/);
    expect(applied).toEqual([{ maxConcurrentTurns: 3, error: expect.stringMatching(/not valid JSON/) }]);
  });

  it('goes back to the defaults when the file is deleted', async () => {
    writeFileSync(file, '{ "maxConcurrentTurns": 3 }\n');
    const service = open();
    rmSync(file);
    await service.reload();
    expect(service.current.maxConcurrentTurns).toBe(4);
  });

  it('starts on the defaults from an empty file', () => {
    writeFileSync(file, '\n');
    const service = open();
    expect(service.current.maxConcurrentTurns).toBe(4);
    expect(service.lastError).toBeNull();
  });
});
