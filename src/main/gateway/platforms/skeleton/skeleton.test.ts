import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../logger';
import type { AdapterEvent, InboundMessage, IntakeOutcome } from '../adapter';
import { ReconnectBackoff } from '../backoff';
import { Admission } from './admission';
import { IntakeHandOn } from './hand-on';
import { ReceiveLoop } from './receive-loop';
import { ReconnectTimer } from './reconnect-timer';
import { AdapterStatus } from './status';
import { TypingRepeats } from './typing-repeats';

function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const record = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
}

const message: InboundMessage = {
  source: { platform: 'test', chatId: 'c', chatType: 'direct', senderId: 's' },
  text: 'hello',
  messageRef: 'test:c:1',
};

afterEach(() => {
  vi.useRealTimers();
});

describe('AdapterStatus', () => {
  it('tells a new state once, a state with an error every time, and logs the error under the platform name', () => {
    const logger = recordingLogger();
    const status = new AdapterStatus('test', logger);
    const events: AdapterEvent[] = [];
    status.listen((event) => events.push(event));
    status.set('connecting');
    status.set('connecting');
    status.set('disconnected', 'lost it', 1234);
    status.set('disconnected', 'lost it');
    expect(events).toEqual([
      { type: 'state', state: 'connecting' },
      { type: 'state', state: 'disconnected', error: 'lost it', nextAttemptAt: 1234 },
      { type: 'state', state: 'disconnected', error: 'lost it' },
    ]);
    expect(logger.lines).toEqual(['warn test: lost it', 'warn test: lost it']);
    expect(status.state).toBe('disconnected');
    expect(status.up).toBe(false);
  });

  it('leaves the log alone when the adapter logs its own errors', () => {
    const logger = recordingLogger();
    new AdapterStatus('irc', logger, false).set('disconnected', 'closed');
    expect(logger.lines).toEqual([]);
  });
});

describe('IntakeHandOn', () => {
  it("hands the pipeline's ack on once, whatever it says after", async () => {
    const status = new AdapterStatus('test', recordingLogger());
    const acks: ((outcome: IntakeOutcome) => void)[] = [];
    status.listen((event) => {
      if (event.type === 'message' && event.ack) acks.push(event.ack);
    });
    const outcome = new IntakeHandOn(status).handOn(message);
    acks[0]!('saved');
    acks[0]!('not-now');
    await expect(outcome).resolves.toBe('saved');
  });

  it('is not-now at once when nobody listens', async () => {
    await expect(new IntakeHandOn(new AdapterStatus('test', recordingLogger())).handOn(message)).resolves.toBe('not-now');
  });

  it('keeps a timeout apart for the adapter that asks, and counts it as not-now for the others', async () => {
    vi.useFakeTimers();
    const status = new AdapterStatus('test', recordingLogger());
    status.listen(() => {});
    const handOn = new IntakeHandOn(status, 1_000);
    const waited = handOn.wait(message);
    const handed = handOn.handOn(message);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(waited).resolves.toBe('timeout');
    await expect(handed).resolves.toBe('not-now');
  });
});

describe('Admission', () => {
  const approved = { isApproved: (sender: string) => sender === 'approved' };

  it('follows dmPolicy for direct messages', () => {
    const open = new Admission({ dmPolicy: 'open', allowFrom: [] }, approved);
    const allowlist = new Admission({ dmPolicy: 'allowlist', allowFrom: ['listed'] }, approved);
    const pairing = new Admission({ dmPolicy: 'pairing', allowFrom: ['listed'] }, approved);
    expect(open.direct('stranger')).toBe('agent');
    expect([allowlist.direct('listed'), allowlist.direct('approved'), allowlist.direct('stranger')]).toEqual(['agent', 'ignore', 'ignore']);
    expect([pairing.direct('listed'), pairing.direct('approved'), pairing.direct('stranger')]).toEqual(['agent', 'agent', 'pair']);
  });

  it('ignores a stranger instead of pairing when there is no pairing store', () => {
    expect(new Admission({ dmPolicy: 'pairing', allowFrom: [] }, undefined).direct('stranger')).toBe('ignore');
  });

  it("in a group place, asks the place's rules and, only when they require it, whether the bot was addressed", () => {
    const admission = new Admission({ dmPolicy: 'pairing', allowFrom: ['listed'] }, approved);
    const addressed = vi.fn(() => false);
    expect(admission.inPlace('listed', undefined, addressed)).toBe('ignore');
    expect(admission.inPlace('approved', { allowFrom: [], requireMention: false }, addressed)).toBe('agent');
    expect(admission.inPlace('stranger', { allowFrom: [], requireMention: false }, addressed)).toBe('ignore');
    expect(admission.inPlace('stranger', { allowFrom: ['*'], requireMention: false }, addressed)).toBe('agent');
    expect(admission.inPlace('listed', { allowFrom: ['other'], requireMention: false }, addressed)).toBe('ignore');
    expect(addressed).not.toHaveBeenCalled();
    expect(admission.inPlace('listed', { allowFrom: [], requireMention: true }, addressed)).toBe('ignore');
    expect(admission.inPlace('listed', { allowFrom: [], requireMention: true }, () => true)).toBe('agent');
  });
});

describe('ReceiveLoop', () => {
  it('restarts a loop that threw, after telling the adapter, and never rejects', async () => {
    vi.useFakeTimers();
    const logger = recordingLogger();
    const loop = new ReceiveLoop('test', logger, (text) => text.replace('secret', '[secret]'));
    const crashes: string[] = [];
    let runs = 0;
    loop.start(
      async () => {
        runs++;
        if (runs === 1) throw new Error('broke on secret');
      },
      (words) => crashes.push(words),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(crashes).toEqual(['broke on [secret]']);
    expect(logger.lines).toEqual(['error test: the receive loop failed; starting it again']);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs).toBe(2);
  });

  it("ends pauses on stop, and on probe only the ones the adapter chose", async () => {
    vi.useFakeTimers();
    const loop = new ReceiveLoop('test', recordingLogger());
    let generation = 0;
    loop.start(async (started) => void (generation = started), () => {});
    const ended: string[] = [];
    void loop.pause(60_000, generation).then(() => ended.push('backoff'));
    void loop.pause(60_000, generation, false).then(() => ended.push('asked'));
    loop.wakeForProbe();
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toEqual(['backoff']);
    loop.stop();
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toEqual(['backoff', 'asked']);
    expect(loop.alive(generation)).toBe(false);
    // A pause of a generation that ended does not wait at all.
    await loop.pause(60_000, generation);
  });
});

describe('ReceiveLoop long poll', () => {
  it('cuts the poll in flight short on probe and on stop, and leaves an answered one alone', () => {
    const loop = new ReceiveLoop('test', recordingLogger());
    loop.start(() => new Promise(() => {}), () => {});
    const probed = loop.pollSignal();
    loop.probe();
    expect(probed.aborted).toBe(true);
    const answered = loop.pollSignal();
    loop.pollEnded(answered);
    const stopped = loop.pollSignal();
    loop.stop();
    expect([answered.aborted, stopped.aborted]).toEqual([false, true]);
  });
});

describe('ReconnectTimer and ReconnectBackoff', () => {
  it('runs the waiting attempt early on hurry, once', async () => {
    vi.useFakeTimers();
    const timer = new ReconnectTimer();
    const attempt = vi.fn();
    expect(timer.hurry()).toBe(false);
    timer.schedule(10_000, attempt);
    expect(timer.waiting).toBe(true);
    expect(timer.hurry()).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(attempt).toHaveBeenCalledTimes(1);
    expect(timer.waiting).toBe(false);
  });

  it('counts failures in a row and starts again after a success', () => {
    const backoff = new ReconnectBackoff((attempt) => attempt * 100);
    expect([backoff.next(), backoff.next()]).toEqual([100, 200]);
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });
});

describe('TypingRepeats', () => {
  it('repeats until stopped, says it stopped once, and stops every repeat on stopAll without saying so', async () => {
    vi.useFakeTimers();
    const repeats = new TypingRepeats();
    const said: string[] = [];
    const stop = repeats.start(() => said.push('a'), 1_000, () => said.push('a stopped'));
    repeats.start(() => said.push('b'), 1_000, () => said.push('b stopped'));
    await vi.advanceTimersByTimeAsync(1_000);
    stop();
    stop();
    repeats.stopAll();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(said).toEqual(['a', 'b', 'a', 'b', 'a stopped']);
  });
});
