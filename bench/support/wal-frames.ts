import type { Db } from '../../src/main/gateway/db/database';
import { walFrames } from '../../test/support/wal-log';

/**
 * What the database wrote, counted from its write-ahead log rather than timed:
 * the same on a busy machine as on a quiet one. Every commit appends one frame
 * (a 4 KiB page) for each page it changed, and an fsync must write them all
 * out, so frames per turn are what a turn's durability costs the disk.
 *
 * `measure` runs with automatic checkpoints off (the log keeps every frame) and
 * starts from an emptied log; the connection's checkpoint setting is put back
 * after.
 */
export interface WalCount {
  readonly frames: number;
  readonly commits: number;
  /** Frames per table or index, most first. */
  readonly byTree: readonly (readonly [name: string, frames: number])[];
}

export async function countWalFrames(db: Db, measure: () => Promise<void>): Promise<WalCount> {
  const autocheckpoint = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  db.pragma('wal_autocheckpoint = 0');
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    await measure();
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const logged = walFrames(`${db.name}-wal`, pageSize);
    const treeOf = new Map<number, string>();
    for (const row of db.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[]) treeOf.set(row.pageno, row.name);
    const byTree = new Map<string, number>();
    for (const { page } of logged) {
      const tree = treeOf.get(page) ?? 'free or new pages';
      byTree.set(tree, (byTree.get(tree) ?? 0) + 1);
    }
    const frames = logged.length;
    const commits = logged.filter((frame) => frame.commit).length;
    return { frames, commits, byTree: [...byTree].sort((a, b) => b[1] - a[1]) };
  } finally {
    db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
  }
}

/** `frames / turns`, `commits / turns` and the three trees written most, for a report line. */
export function perTurn(count: WalCount, turns: number): Record<string, number | string> {
  return {
    wal_frames_per_turn: count.frames / turns,
    commits_per_turn: count.commits / turns,
    most_written: count.byTree
      .slice(0, 3)
      .map(([name, frames]) => `${name.replace(/^ledger_/, '')}:${(frames / turns).toFixed(1)}`)
      .join(','),
  };
}
