import { randomUUID } from 'node:crypto';
import type { AdapterEvent, AdapterState, InboundMessage, PlatformAdapter, SendResult, SendTarget } from '../adapter';
import { LOCAL_INTAKE } from '../intake';
import type { MediaOffer, MediaOpener } from '../../media/media';
import type { SessionSource } from '../../session/source';

export const LOCAL_PLATFORM = 'local';
export const LOCAL_CHAT_ID = 'main';

/** Where the window's own chat's messages come from: its owner, in its one chat. */
export function localChatSource(): SessionSource {
  return { platform: LOCAL_PLATFORM, chatId: LOCAL_CHAT_ID, chatType: 'direct', senderId: 'owner', senderName: 'You', chatName: 'Local chat' };
}

export interface LocalDelivery {
  readonly chatId: string;
  readonly text: string;
  readonly idempotencyKey: string;
  readonly platformMessageId: string;
}

/**
 * The app's own chat, used from the window and the API; always connected. Its
 * "platform" is Homing itself: a reply is delivered when it is announced to the
 * windows, which show each reply once by its idempotency key — so a resend after
 * a crash can never show twice, and no marker is needed.
 */
export class LocalAdapter implements PlatformAdapter {
  readonly platform = LOCAL_PLATFORM;
  readonly limits = { maxLength: 100_000, unit: 'code-points' } as const;
  readonly intake = LOCAL_INTAKE;
  readonly idempotentSends = true;
  private readonly listeners = new Set<(event: AdapterEvent) => void>();
  private connected = false;

  /** The window's uploads, when it can send files (media/local-uploads.ts). */
  readonly openMedia: MediaOpener | undefined;

  constructor(
    private readonly announce: (delivery: LocalDelivery) => void,
    private readonly newMessageRef: () => string = randomUUID,
    openUpload?: MediaOpener,
  ) {
    this.openMedia = openUpload;
  }

  state(): AdapterState {
    return this.connected ? 'connected' : 'disconnected';
  }

  async connect(): Promise<void> {
    this.connected = true;
    this.emit({ type: 'state', state: 'connected' });
  }

  async disconnect(): Promise<void> {
    this.connected = false;
    this.emit({ type: 'state', state: 'disconnected' });
  }

  async probe(): Promise<void> {}

  /** Every local chat is reachable while the gateway runs. */
  canSend(): boolean {
    return this.connected;
  }

  onEvent(listener: (event: AdapterEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A message typed in the window. `clientMessageId` lets a window retry a send
   * without making a second turn (it becomes the message ref).
   */
  receive(text: string, clientMessageId?: string, media?: readonly MediaOffer[]): InboundMessage {
    const messageRef = clientMessageId ?? this.newMessageRef();
    const message: InboundMessage = {
      source: { ...localChatSource(), messageId: messageRef },
      text,
      messageRef,
      ...(media && media.length > 0 ? { media } : {}),
    };
    this.emit({ type: 'message', message });
    return message;
  }

  async send(text: string, target: SendTarget): Promise<SendResult> {
    if (!this.connected) return { ok: false, retryable: true, permanent: false, error: 'the gateway is stopping' };
    const platformMessageId = `local-${target.idempotencyKey}`;
    this.announce({ chatId: target.chatId, text, idempotencyKey: target.idempotencyKey, platformMessageId });
    return { ok: true, platformMessageId };
  }

  private emit(event: AdapterEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
