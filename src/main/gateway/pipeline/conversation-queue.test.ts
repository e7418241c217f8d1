import { describe, expect, it } from 'vitest';
import { ConversationQueue } from './conversation-queue';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('ConversationQueue', () => {
  it("runs one conversation's tasks in arrival order, one at a time", async () => {
    const queue = new ConversationQueue(4);
    const log: string[] = [];
    const gate = deferred();
    const first = queue.run('a', async () => {
      log.push('a1 start');
      await gate.promise;
      log.push('a1 end');
    });
    const second = queue.run('a', async () => {
      log.push('a2 start');
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(log).toEqual(['a1 start']);
    gate.resolve();
    await Promise.all([first, second]);
    expect(log).toEqual(['a1 start', 'a1 end', 'a2 start']);
  });

  it('runs different conversations in parallel up to the limit', async () => {
    const queue = new ConversationQueue(2);
    let running = 0;
    let peak = 0;
    const gates = [deferred(), deferred(), deferred()];
    const tasks = gates.map((gate, index) =>
      queue.run(`c${index}`, async () => {
        running++;
        peak = Math.max(peak, running);
        await gate.promise;
        running--;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(running).toBe(2);
    gates.forEach((gate) => gate.resolve());
    await Promise.all(tasks);
    expect(peak).toBe(2);
  });

  it('keeps going after a task fails', async () => {
    const queue = new ConversationQueue(1);
    const failed = queue.run('a', async () => {
      throw new Error('boom');
    });
    await expect(failed).rejects.toThrow('boom');
    expect(await queue.run('a', async () => 'next')).toBe('next');
    await queue.drain();
    expect(queue.activeConversations).toBe(0);
  });

  it('takes no slot while a task waits for `ready`, and a task that leaves its slot lets the next conversation in', async () => {
    const queue = new ConversationQueue(1);
    const started: string[] = [];
    const disk = deferred();
    const sending = deferred();
    // a waits for the disk: b runs meanwhile, though there is one slot.
    const a = queue.run('a', async () => void started.push('a'), disk.promise);
    const b = queue.run('b', async () => {
      started.push('b');
      queue.leaveSlot('b'); // answered; what is left needs no slot
      queue.leaveSlot('b'); // twice changes nothing
      await sending.promise;
      started.push('b sent');
    });
    const c = queue.run('c', async () => void started.push('c'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(started).toEqual(['b', 'c']);
    // A later task of b still waits for b's first.
    const b2 = queue.run('b', async () => void started.push('b2'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(started).toEqual(['b', 'c']);
    disk.resolve();
    sending.resolve();
    await Promise.all([a, b, c, b2]);
    expect(started.indexOf('b2')).toBeGreaterThan(started.indexOf('b sent'));
    expect(started).toContain('a');
  });
});
