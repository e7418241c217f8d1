import type { SessionSource } from '../gateway/session/source';

/** How a demo reply ends up in the ledger: every state the Deliveries view has to explain. */
export type DemoFate =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'pending' }
  | { readonly kind: 'attempting'; readonly chunksDelivered: number }
  | { readonly kind: 'failed'; readonly error: string; readonly retryAfterMs: number }
  | { readonly kind: 'failed-permanently'; readonly error: string }
  | { readonly kind: 'abandoned-cap'; readonly error: string }
  | { readonly kind: 'abandoned-stale' }
  | { readonly kind: 'discarded' };

export interface DemoExchange {
  /** Minutes before the demo was made. */
  readonly minutesAgo: number;
  readonly ask: string;
  readonly answer: string;
  readonly fate: DemoFate;
}

export interface DemoConversation {
  readonly source: SessionSource;
  readonly exchanges: readonly DemoExchange[];
}

const LOCAL: SessionSource = { platform: 'local', chatId: 'main', chatType: 'direct', senderId: 'owner', senderName: 'You', chatName: 'Local chat' };
const ALICE: SessionSource = { platform: 'irc', chatId: 'alice', chatType: 'direct', senderId: 'alice', senderName: 'alice' };
const BOB: SessionSource = { platform: 'irc', chatId: 'bob', chatType: 'direct', senderId: 'bob', senderName: 'bob' };
const CHANNEL: SessionSource = { platform: 'irc', chatId: '#homing', chatType: 'group', senderId: 'alice', senderName: 'alice', chatName: '#homing' };
const LAB: SessionSource = { platform: 'irc', chatId: '#homelab', chatType: 'group', senderId: 'carol', senderName: 'carol', chatName: '#homelab' };

const RECIPE = [
  'Here is a simple bread you can start tonight and bake tomorrow:',
  '',
  '1. Mix 500 g flour, 10 g salt, 2 g dry yeast and 380 g water until no dry flour is left.',
  '2. Cover and leave it on the counter for 12 to 16 hours.',
  '3. Fold it onto itself a few times, shape a ball and let it rest for an hour.',
  '4. Bake in a covered pot at 240 °C for 30 minutes, then 15 more without the lid.',
  '',
  'Let it cool for an hour before you cut it — the inside is still cooking.',
].join('\n');

/**
 * Conversations on the local chat and on IRC, written through the real session
 * store and ledger by `homing demo`. Chunked replies are split on blank lines.
 */
export const DEMO_CONVERSATIONS: readonly DemoConversation[] = [
  {
    source: LOCAL,
    exchanges: [
      { minutesAgo: 190, ask: 'What can you do?', answer: 'I answer you here and on the chats you connect — IRC for now. Every reply is recorded before it is sent, so none is lost.', fate: { kind: 'delivered' } },
      { minutesAgo: 31, ask: 'Remind me what is on my list for tomorrow.', answer: 'You asked me to remember: call the plumber at 9, send the invoice to Dana, and water the tomatoes.', fate: { kind: 'delivered' } },
    ],
  },
  {
    source: ALICE,
    exchanges: [
      { minutesAgo: 240, ask: 'hey, are you the assistant Sam set up?', answer: 'Yes — I am Sam’s assistant. Ask away.', fate: { kind: 'delivered' } },
      { minutesAgo: 95, ask: 'can you give me a bread recipe for beginners?', answer: RECIPE, fate: { kind: 'attempting', chunksDelivered: 1 } },
      // Waits behind the recipe: replies of one conversation go out in order.
      { minutesAgo: 12, ask: 'and how long does the dough keep in the fridge?', answer: 'Up to three days in the fridge, covered. The flavour gets better; let it warm up for an hour before shaping.', fate: { kind: 'pending' } },
    ],
  },
  {
    source: BOB,
    exchanges: [
      { minutesAgo: 300, ask: 'what time is the meetup on friday?', answer: 'The meetup is on Friday at 19:00 at the library, room 2.', fate: { kind: 'failed', error: 'bob is not online: 401 bob No such nick or channel name', retryAfterMs: 60_000 } },
    ],
  },
  {
    source: CHANNEL,
    exchanges: [
      { minutesAgo: 1500, ask: 'homing: what is the weather tomorrow?', answer: 'I cannot look at the weather from here, but your phone’s forecast says rain after 15:00.', fate: { kind: 'abandoned-stale' } },
      { minutesAgo: 400, ask: 'homing: summarise the thread about the server move', answer: 'The move is planned for Saturday; Carol brings the rack, backups are done, DNS changes on Sunday.', fate: { kind: 'abandoned-cap', error: 'the server did not confirm the message within 15 s' } },
      { minutesAgo: 8, ask: 'homing: who is bringing snacks?', answer: 'Alice said she brings snacks, Bob brings drinks.', fate: { kind: 'pending' } },
    ],
  },
  {
    source: LAB,
    exchanges: [
      { minutesAgo: 720, ask: 'homing: tell a joke', answer: 'Why did the router break up with the switch? It needed more space on its own network.', fate: { kind: 'discarded' } },
      { minutesAgo: 200, ask: 'homing: post the backup report here every evening', answer: 'I can post it when someone asks here; I cannot schedule messages myself.', fate: { kind: 'failed-permanently', error: 'the server cannot deliver to #homelab: 404 #homelab Cannot send to channel' } },
      { minutesAgo: 60, ask: 'homing: how much disk does the NAS have left?', answer: 'I cannot reach the NAS myself; last time Carol checked it had 1.2 TB free.', fate: { kind: 'delivered' } },
    ],
  },
];
