/**
 * The order in which one room's messages may move its saved archive position
 * (room-positions.ts), for one stay in the room (a join). Every message with
 * the room's stanza-id gets an entry, in the archive's order; the position moves
 * over the entries that are done (saved, or needing nothing) from the front and
 * stops at the first one that is not, so it never passes a message not saved.
 *
 * While the archive is being read (after a join), messages arriving live are
 * newer than every archived one not read yet: their entries wait aside and
 * join the line once the archive is read to its end, so the position cannot
 * jump over a page not read. A live message the archive hands again (it arrived
 * while its page was being read) keeps its one entry, placed where the archive
 * has it, and is not handed on twice.
 */
export interface CursorEntry {
  readonly id: string;
  readonly at: number;
  done: boolean;
  /** In the line (else waiting aside for the catch-up to end). */
  placed: boolean;
}

/** Ids remembered after their entry left the line, to recognise the archive handing them again. */
const PASSED_KEPT = 2_000;

export class RoomCursor {
  private readonly line: CursorEntry[] = [];
  private aside: CursorEntry[] | undefined;
  private readonly entries = new Map<string, CursorEntry>();
  private readonly passed = new Set<string>();
  private retired = false;

  constructor(private readonly advance: (id: string, at: number) => void) {}

  /** The archive is being read: live messages wait aside. */
  beginCatchUp(): void {
    this.aside ??= [];
  }

  /** The archive was read to its end: what arrived live meanwhile joins the line after it. */
  endCatchUp(): void {
    const aside = this.aside ?? [];
    this.aside = undefined;
    for (const entry of aside) this.place(entry);
    this.move();
  }

  get catchingUp(): boolean {
    return this.aside !== undefined;
  }

  /** A message that arrived live; undefined when it was taken already (handed again). */
  live(id: string, at: number): CursorEntry | undefined {
    if (this.known(id)) return undefined;
    const entry: CursorEntry = { id, at, done: false, placed: false };
    this.entries.set(id, entry);
    if (this.aside) this.aside.push(entry);
    else this.place(entry);
    return entry;
  }

  /** A message read from the archive; undefined when it arrived live already (its entry takes this place in the line). */
  archived(id: string, at: number): CursorEntry | undefined {
    const seen = this.entries.get(id);
    if (seen) {
      if (!seen.placed) this.place(seen);
      return undefined;
    }
    if (this.passed.has(id)) return undefined;
    const entry: CursorEntry = { id, at, done: false, placed: false };
    this.entries.set(id, entry);
    this.place(entry);
    return entry;
  }

  /** The entry's message is saved (or needs nothing). */
  done(entry: CursorEntry): void {
    entry.done = true;
    this.move();
  }

  /** A newer stay in the room took over: this one no longer moves the saved position. */
  retire(): void {
    this.retired = true;
  }

  private known(id: string): boolean {
    return this.entries.has(id) || this.passed.has(id);
  }

  private place(entry: CursorEntry): void {
    entry.placed = true;
    this.line.push(entry);
  }

  private move(): void {
    let last: CursorEntry | undefined;
    while (this.line[0]?.done) {
      last = this.line.shift()!;
      this.entries.delete(last.id);
      this.passed.add(last.id);
      if (this.passed.size > PASSED_KEPT) this.passed.delete(this.passed.values().next().value as string);
    }
    if (last && !this.retired) this.advance(last.id, last.at);
  }
}
