import { bounded, type SyncEvent } from './inbound';

export interface RoomView {
  readonly id: string;
  /** The room's name, else its alias, else (a direct chat) the other person's name. */
  readonly name: string;
  readonly direct: boolean;
  readonly encrypted: boolean;
}

interface RoomState {
  name: string | undefined;
  alias: string | undefined;
  encrypted: boolean;
  /** Members' display names (joined and invited), bounded. */
  readonly members: Map<string, { name: string | undefined; membership: string }>;
}

const MAX_MEMBERS_TRACKED = 500;

/**
 * What the adapter knows of the rooms it is in, from sync state and timeline
 * events: names (for conversations and the window), members' display names,
 * whether a room is encrypted, and which rooms are direct chats (`m.direct`
 * or the invite's `is_direct`, kept by the caller).
 */
export class MatrixRooms {
  private readonly rooms = new Map<string, RoomState>();
  /** The bot's m.direct: room id → the other person. */
  private direct = new Map<string, string>();

  constructor(
    private readonly ownUserId: string,
    private readonly knownDirect: (roomId: string) => boolean,
  ) {}

  apply(roomId: string, event: SyncEvent): void {
    if (event.state_key === undefined) return;
    const room = this.room(roomId);
    const content = event.content ?? {};
    switch (event.type) {
      case 'm.room.name':
        room.name = typeof content.name === 'string' ? bounded(content.name) : undefined;
        break;
      case 'm.room.canonical_alias':
        room.alias = typeof content.alias === 'string' ? bounded(content.alias) : undefined;
        break;
      case 'm.room.encryption':
        room.encrypted = true;
        break;
      case 'm.room.member': {
        const membership = typeof content.membership === 'string' ? content.membership : 'leave';
        if (membership === 'join' || membership === 'invite') {
          if (room.members.size < MAX_MEMBERS_TRACKED || room.members.has(event.state_key)) {
            room.members.set(event.state_key, { name: typeof content.displayname === 'string' ? bounded(content.displayname) : undefined, membership });
          }
        } else room.members.delete(event.state_key);
        break;
      }
    }
  }

  setDirect(direct: ReadonlyMap<string, readonly string[]>): void {
    this.direct = new Map();
    for (const [user, rooms] of direct) for (const roomId of rooms) this.direct.set(roomId, user);
  }

  forget(roomId: string): void {
    this.rooms.delete(roomId);
  }

  has(roomId: string): boolean {
    return this.rooms.has(roomId);
  }

  isEncrypted(roomId: string): boolean {
    return this.rooms.get(roomId)?.encrypted ?? false;
  }

  isDirect(roomId: string): boolean {
    return this.direct.has(roomId) || this.knownDirect(roomId);
  }

  memberName(roomId: string, userId: string): string | undefined {
    return this.rooms.get(roomId)?.members.get(userId)?.name;
  }

  name(roomId: string): string | undefined {
    const room = this.rooms.get(roomId);
    if (!room) return undefined;
    if (room.name) return room.name;
    if (room.alias) return room.alias;
    const others = [...room.members].filter(([id]) => id !== this.ownUserId);
    if (others.length === 0) return undefined;
    return others
      .slice(0, 3)
      .map(([id, member]) => member.name ?? id)
      .join(', ');
  }

  list(): RoomView[] {
    return [...this.rooms.keys()].map((id) => ({ id, name: this.name(id) ?? id, direct: this.isDirect(id), encrypted: this.isEncrypted(id) }));
  }

  private room(roomId: string): RoomState {
    let room = this.rooms.get(roomId);
    if (!room) {
      room = { name: undefined, alias: undefined, encrypted: false, members: new Map() };
      this.rooms.set(roomId, room);
    }
    return room;
  }
}
