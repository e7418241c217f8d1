import { readFileSync } from 'node:fs';

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** One frame of a write-ahead log: the database page it holds, and whether it ends a commit. */
export interface WalFrame {
  readonly page: number;
  readonly commit: boolean;
}

/**
 * The frames of the write-ahead log `file`, in order, up to the first unused one
 * (after a restart the log is rewritten from the start). A commit's last frame
 * records the database size in its header; the others hold 0 there.
 */
export function walFrames(file: string, pageSize: number): WalFrame[] {
  const wal = readFileSync(file);
  const frames: WalFrame[] = [];
  for (let offset = WAL_HEADER; offset + FRAME_HEADER + pageSize <= wal.length; offset += FRAME_HEADER + pageSize) {
    const page = wal.readUInt32BE(offset);
    if (page === 0) break;
    frames.push({ page, commit: wal.readUInt32BE(offset + 4) !== 0 });
  }
  return frames;
}
