/**
 * Runs tasks so that one conversation's messages are handled strictly in order
 * (a message that arrives while the agent is still answering waits its turn),
 * while different conversations run in parallel, up to a limit.
 */
export class ConversationQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** How each conversation's running task gives its slot back (leaveSlot). */
  private readonly slots = new Map<string, () => void>();

  constructor(private limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('the concurrency limit must be a positive integer');
  }

  setLimit(limit: number): void {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('the concurrency limit must be a positive integer');
    this.limit = limit;
    this.wakeWaiters();
  }

  /** Conversations with work queued or running. */
  get activeConversations(): number {
    return this.tails.size;
  }

  /**
   * Resolves with the task's result once it has run, after the conversation's
   * earlier tasks. `ready` (a saved message reaching the disk) is awaited
   * before the task takes one of the limited slots, so waiting on the disk
   * never holds one.
   */
  run<T>(conversation: string, task: () => Promise<T>, ready?: Promise<unknown>): Promise<T> {
    const previous = this.tails.get(conversation) ?? Promise.resolve();
    const result = previous.then(() => ready).then(() => this.withSlot(conversation, task));
    // The tail never rejects, so one failed task does not block the conversation.
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(conversation, tail);
    void tail.then(() => {
      if (this.tails.get(conversation) === tail) this.tails.delete(conversation);
    });
    return result;
  }

  /**
   * The conversation's running task gives its slot back before it ends: the
   * agent has answered, and what is left (recording and sending the reply)
   * needs no slot. The conversation's later tasks still wait for it.
   */
  leaveSlot(conversation: string): void {
    const release = this.slots.get(conversation);
    if (!release) return;
    this.slots.delete(conversation);
    release();
  }

  /** Resolves when every queued task has finished. */
  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }

  private async withSlot<T>(conversation: string, task: () => Promise<T>): Promise<T> {
    while (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      this.running--;
      this.wakeWaiters();
    };
    this.slots.set(conversation, release);
    try {
      return await task();
    } finally {
      if (this.slots.get(conversation) === release) this.slots.delete(conversation);
      release();
    }
  }

  private wakeWaiters(): void {
    const free = this.limit - this.running;
    for (const wake of this.waiting.splice(0, Math.max(0, free))) wake();
  }
}
