import { describe, expect, it } from 'vitest';
import { RoomCursor } from './room-cursor';

function cursor() {
  const saved: string[] = [];
  return { saved, cursor: new RoomCursor((id) => saved.push(id)) };
}

describe('a room\u2019s archive position', () => {
  it('moves over messages done from the front, never past one not saved yet', () => {
    const { saved, cursor: line } = cursor();
    const a = line.live('a', 1)!;
    const b = line.live('b', 2)!;
    const c = line.live('c', 3)!;
    line.done(b);
    line.done(c);
    expect(saved).toEqual([]);
    line.done(a);
    expect(saved).toEqual(['c']);
  });

  it('while the archive is read, live messages wait behind it and do not move the position', () => {
    const { saved, cursor: line } = cursor();
    line.beginCatchUp();
    const live = line.live('z', 9)!;
    line.done(live);
    expect(saved).toEqual([]);
    const old = line.archived('x', 1)!;
    line.done(old);
    expect(saved).toEqual(['x']);
    line.endCatchUp();
    expect(saved).toEqual(['x', 'z']);
  });

  it('a live message the archive hands again is not handed twice, and takes the archive\u2019s place in the line', () => {
    const { saved, cursor: line } = cursor();
    line.beginCatchUp();
    const live = line.live('y', 5)!;
    const x = line.archived('x', 1)!;
    expect(line.archived('y', 5)).toBeUndefined();
    const z = line.archived('z', 6)!;
    line.done(x);
    line.done(z);
    // y is not saved yet: the position stops before it, though z (after it in the archive) is done.
    expect(saved).toEqual(['x']);
    line.done(live);
    expect(saved).toEqual(['x', 'z']);
    line.endCatchUp();
    expect(line.live('y', 5)).toBeUndefined();
    expect(line.archived('x', 1)).toBeUndefined();
  });

  it('a stay that ended no longer moves the position', () => {
    const { saved, cursor: line } = cursor();
    const a = line.live('a', 1)!;
    line.retire();
    line.done(a);
    expect(saved).toEqual([]);
  });
});
