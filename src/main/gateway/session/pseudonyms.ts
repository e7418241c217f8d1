import { createHmac } from 'node:crypto';

/** 48 bits: collisions need ~16 million people in one install before they become likely. */
const HEX_LENGTH = 12;
export const MIN_KEY_BYTES = 16;

/**
 * Names for people and chats that can be persisted and shown: a keyed
 * HMAC-SHA256 of the raw id under the install's secret. A bare hash would let
 * anyone holding a transcript recover a phone number or a small numeric id by
 * hashing candidates; with the key they cannot, and two installs give the same
 * person unrelated pseudonyms.
 */
export interface Pseudonymiser {
  /** `user_<12 hex>`: a person on one platform; what transcripts and logs name. */
  person(platform: string, senderId: string): string;
  /** `user_<12 hex>` for a raw id regardless of platform (the `per-peer` DM scope). */
  peer(senderId: string): string;
  /** `user_<12 hex>` for a name in `identityLinks`: one person across platforms. */
  linkedPerson(linkName: string): string;
  /** `<platform>:<12 hex>`: a chat, for logs and what the agent is shown. */
  chat(platform: string, chatId: string): string;
  /** `chat_<12 hex>`: the same chat as a session key's part (the same MAC as `chat`). */
  chatKey(platform: string, chatId: string): string;
  /** `thread_<12 hex>`: a thread or topic as a session key's part (after its chat's part). */
  thread(platform: string, threadId: string): string;
  /** `msg_<12 hex>`: a message's platform reference, as transcripts and the ledger keep it. */
  message(platform: string, messageRef: string): string;
}

export function createPseudonymiser(key: Uint8Array): Pseudonymiser {
  if (key.length < MIN_KEY_BYTES) throw new Error(`a pseudonym key needs at least ${MIN_KEY_BYTES} bytes`);
  const secret = Buffer.from(key);
  // Domain-separated and NUL-joined: the domain and the platform never contain
  // NUL, and the raw id comes last, so distinct inputs never share a message.
  // Hashed as UTF-16 code units, not UTF-8: UTF-8 turns every unpaired
  // surrogate into U+FFFD, which would give distinct ids one pseudonym.
  const mac = (...parts: string[]) =>
    createHmac('sha256', secret).update(Buffer.from(parts.join('\u0000'), 'utf16le')).digest('hex').slice(0, HEX_LENGTH);
  return {
    person: (platform, senderId) => `user_${mac('person', platform, senderId)}`,
    peer: (senderId) => `user_${mac('peer', senderId)}`,
    linkedPerson: (linkName) => `user_${mac('link', linkName)}`,
    chat: (platform, chatId) => `${platform}:${mac('chat', platform, chatId)}`,
    chatKey: (platform, chatId) => `chat_${mac('chat', platform, chatId)}`,
    thread: (platform, threadId) => `thread_${mac('thread', platform, threadId)}`,
    message: (platform, messageRef) => `msg_${mac('message', platform, messageRef)}`,
  };
}
