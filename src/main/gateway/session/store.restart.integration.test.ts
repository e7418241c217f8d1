import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runChild } from './fixtures/run-child';
import { turnText } from './fixtures/child-source';
import type { Turn } from './transcript-record';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('restart continuity (two real processes)', () => {
  it('a second process started afterwards continues the same session and loads the same context', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'homing-restart-'));
    dirs.push(dataDir);

    const [written] = await runChild(['write', dataDir, '6']);
    const first = JSON.parse(written!) as { sessionId: string; sessionKey: string; status: string };
    expect(first.status).toBe('new');

    const [loaded] = await runChild(['load', dataDir]);
    const second = JSON.parse(loaded!) as { sessionId: string; sessionKey: string; status: string; context: Turn[] };
    expect(second).toMatchObject({ sessionId: first.sessionId, sessionKey: first.sessionKey, status: 'continued' });
    expect(second.context.map((turn) => [turn.type, turn.text])).toEqual(
      Array.from({ length: 6 }, (_, i) => [i % 2 === 0 ? 'user' : 'assistant', turnText(i)]),
    );
    expect(second.context.filter((turn) => turn.type === 'assistant').map((turn) => turn.obligationId)).toEqual([
      'obligation-1',
      'obligation-3',
      'obligation-5',
    ]);
  });
});
