import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { freePort } from './ports';
import { startProsody, type RunningProsody } from './prosody';
import { XmppRelay } from './xmpp-relay';
import { XmppUser } from './xmpp-user';

/** The accounts every XMPP test's prosody has: the gateway's and alice's. */
export const XMPP_PASSWORDS = { homing: 'homing-pw', alice: 'alice-pw' } as const;

export interface XmppWorld {
  readonly prosody: RunningProsody;
  /** In front of prosody: the gateway connects through it, so a test can hold, drop or watch the stream. */
  readonly relay: XmppRelay;
  /** Logged in to prosody directly. */
  readonly alice: XmppUser;
}

/**
 * Registers, in the calling describe: one real prosody for the file (its
 * users `homing` and `alice`), and for each test a relay in front of it and
 * alice logged in, both gone after the test. After-hooks run in reverse
 * order, so the ones a file registers after this (its gateways killed) run
 * before the relay goes.
 */
export function useXmppWorld(options: { readonly hibernationSeconds?: number } = {}): XmppWorld {
  let prosody: RunningProsody | undefined;
  let relay: XmppRelay | undefined;
  let alice: XmppUser | undefined;

  beforeAll(async () => {
    prosody = await startProsody({ users: XMPP_PASSWORDS, ...(options.hibernationSeconds !== undefined ? { hibernationSeconds: options.hibernationSeconds } : {}) });
  }, 60_000);

  afterAll(async () => {
    await prosody?.dispose();
  });

  beforeEach(async () => {
    const server = prosody!;
    relay = new XmppRelay(await freePort(), () => server.port);
    await relay.open();
    alice = new XmppUser('alice', XMPP_PASSWORDS.alice, server.port);
    await alice.start();
  });

  afterEach(async () => {
    await alice?.stop();
    await relay?.dispose();
  });

  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not started: use it inside a test`);
    return value;
  };
  return {
    get prosody() {
      return started(prosody, 'prosody');
    },
    get relay() {
      return started(relay, 'the relay');
    },
    get alice() {
      return started(alice, 'alice');
    },
  };
}
