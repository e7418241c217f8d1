import { useState } from 'react';

export interface RowActions<Id, Note> {
  /** Each row's last note (what its action did, or why it failed). */
  readonly notes: ReadonlyMap<Id, Note>;
  /** The rows whose action is running (their buttons wait). */
  readonly busy: ReadonlySet<Id>;
  /** Sets a row's note; null takes it away. */
  note(id: Id, value: Note | null): void;
  /** Runs a row's action, with the row busy until it ends. */
  withBusy(id: Id, work: () => Promise<void>): Promise<void>;
}

/** Per-row notes and busy marks for a list whose rows have actions (Deliveries, Schedules). */
export function useRowActions<Id, Note>(): RowActions<Id, Note> {
  const [notes, setNotes] = useState<ReadonlyMap<Id, Note>>(new Map());
  const [busy, setBusy] = useState<ReadonlySet<Id>>(new Set());
  const note = (id: Id, value: Note | null) =>
    setNotes((previous) => {
      const next = new Map(previous);
      if (value === null) next.delete(id);
      else next.set(id, value);
      return next;
    });
  const withBusy = async (id: Id, work: () => Promise<void>) => {
    setBusy((previous) => new Set(previous).add(id));
    try {
      await work();
    } finally {
      setBusy((previous) => {
        const next = new Set(previous);
        next.delete(id);
        return next;
      });
    }
  };
  return { notes, busy, note, withBusy };
}
