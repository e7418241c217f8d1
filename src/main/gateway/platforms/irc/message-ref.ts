import { createHash, randomBytes } from 'node:crypto';
import type { IrcMessageEvent } from 'irc-framework';

/**
 * A `messageRef` for an IRC message, which has no id of its own.
 *
 * What the ref must do: be unique (two messages must never share an obligation) and
 * stay the same if the same message is delivered again. Plain IRC never delivers a
 * message twice: a server relays each line once to each connected client and keeps
 * no history. Redelivery only happens through replay (a bouncer's playback, IRCv3
 * chathistory), and replayed lines carry the IRCv3 `msgid` or `server-time` tags.
 * So: `msgid` when present (the network's own id); else server-time plus a hash of
 * who said what where (the same line replayed gives the same ref); else a counter
 * under a per-adapter instance id (wall time + random bytes), unique across
 * restarts, which is all a message seen exactly once needs.
 */
export class MessageRefs {
  private counter = 0;
  /** Unique per adapter instance: wall time plus random bytes. */
  readonly instance: string;

  constructor(nowMs: number, random: () => string = () => randomBytes(4).toString('hex')) {
    this.instance = `${nowMs.toString(36)}-${random()}`;
  }

  next(event: Pick<IrcMessageEvent, 'tags' | 'nick' | 'message'>, chatId: string): string {
    const msgid = event.tags?.['msgid'];
    if (msgid) return `msgid:${msgid}`;
    const time = event.tags?.['time'];
    if (time) {
      const digest = createHash('sha256').update(`${chatId}\n${event.nick}\n${event.message}`).digest('hex').slice(0, 16);
      return `time:${time}:${digest}`;
    }
    this.counter += 1;
    return `seq:${this.instance}:${this.counter}`;
  }
}
