import { FakeSignalCli, type FakeSignalPerson } from '../support/fake-signal-cli';
import { firstHandings, isMidReply, pollUntil, requestIn, restartFake, startFake, streamsOf, type ChaosPlatform } from './platform';

const GROUP_NAME = 'group';
/**
 * A message counts as handed to Homing when signal-cli wrote it to Homing's
 * connection at least this long before that connection ended by a kill or a
 * daemon restart: what was written in the instant before may still have sat
 * unread in the dead process's socket (signal-cli has no client
 * acknowledgement: docs/platforms.md, Signal, "After an outage"). The same
 * margin as XMPP's and IRC's runs.
 */
const HANDED_MARGIN_MS = 1_000;

/**
 * The chaos run on Signal: the fake signal-cli daemon (JSON-RPC lines over
 * TCP, manual receive mode) with the Signal server's queue behind it, people
 * writing in one group (mentioning the bot) and by direct message. A "server
 * restart" takes the daemon away (connections cut) and brings it back on the
 * same port; Signal's queue keeps what people wrote meanwhile.
 *
 * A message counts as handed to Homing the first time signal-cli wrote it to
 * Homing's connection (after signal-cli confirmed it to Signal: from then on
 * only Homing has it), unless that was in the instant of a kill or a daemon
 * restart (HANDED_MARGIN_MS).
 */
export async function startSignalPlatform(users: readonly string[], register: (dispose: () => Promise<void>) => void): Promise<ChaosPlatform> {
  const fake = await startFake(new FakeSignalCli(), register);
  const port = fake.port;
  const people = new Map<string, FakeSignalPerson>(users.map((name) => [name, fake.addPerson(name)]));
  const group = fake.addGroup('Chaos', [...people.values()]);
  const byNumber = new Map<string, string>([...people].map(([name, person]) => [person.number, name]));
  /** message timestamp → request id. */
  const requestOf = new Map<number, string>();
  let lastMidReplyAt = 0;
  /** When the daemon went away (its connections cut). */
  const restarts: number[] = [];
  fake.onSend((sent) => {
    if (sent.message.split('\n').some(isMidReply)) lastMidReplyAt = sent.at;
  });

  return {
    platformsConfig: {
      signal: {
        daemon: fake.address,
        account: fake.account.number,
        allowFrom: [...people.values()].map((person) => person.number),
        groups: { [group.id]: {} },
      },
    },
    env: {},
    users,
    group: GROUP_NAME,
    whenBotReady: (timeoutMs) => pollUntil(() => fake.subscribers > 0, timeoutMs, `the bot did not subscribe to the fake signal-cli in ${timeoutMs / 1000} s`),
    send(user, inGroup, text) {
      const from = people.get(user)!;
      const said = inGroup ? fake.userSays({ from, group, text, mentionBot: true }) : fake.userSays({ from, text });
      const id = requestIn(text);
      if (id) requestOf.set(said.timestamp, id);
      return true;
    },
    async restartServer(random) {
      restarts.push(Date.now());
      await restartFake(fake, port, random);
      // Back once the bot has subscribed again: what was written meanwhile is pushed to it then.
      await pollUntil(() => fake.subscribers > 0, 60_000, 'the bot did not subscribe again after the daemon came back').catch(() => undefined);
    },
    lastMidReplyAt: () => lastMidReplyAt,
    streams: () =>
      streamsOf(
        GROUP_NAME,
        users,
        fake.sent.map((sent) => ({ conversation: sent.groupId === group.id ? GROUP_NAME : sent.to === undefined ? undefined : byNumber.get(sent.to), at: sent.at, text: sent.message })),
      ),
    handed(kills) {
      const cuts = [...kills.map((kill) => kill.at), ...restarts];
      const inTheInstantOfACut = (at: number) => cuts.some((cut) => cut - HANDED_MARGIN_MS <= at && at <= cut + HANDED_MARGIN_MS);
      // Signal's order is the order the queue handed messages over (their timestamps).
      const firsts = [...fake.handed]
        .flatMap(([timestamp, times]) => {
          const id = requestOf.get(timestamp);
          return id === undefined || inTheInstantOfACut(times[0]!) ? [] : [{ timestamp, id, at: times[0]! }];
        })
        .sort((a, b) => a.timestamp - b.timestamp);
      return firstHandings(firsts);
    },
    observerGaps: () => 0,
    dispose: () => fake.stop(),
  };
}
