import type { SessionSummary } from '../../../shared/api';
import { platformInfo, platformTitle } from '../../../shared/platforms';

type ChatType = SessionSummary['chatType'];

/** What each kind of chat looks like: a person, a channel, a thread (text, not an image: no external resources). */
const CHAT_GLYPH: Record<ChatType, string> = { direct: '@', group: '#', channel: '#', thread: '↳' };
const CHAT_WORD: Record<ChatType, string> = { direct: 'direct message', group: 'group', channel: 'channel', thread: 'thread' };


/**
 * A small badge per conversation: the local chat's house, else the kind of chat
 * (DMs, channels and threads look different), coloured by platform. Its label
 * says both, for screen readers.
 */
export function PlatformIcon({ platform, chatType }: { platform: string; chatType?: ChatType | undefined }) {
  const name = platformTitle(platform);
  const label = platform === 'local' ? name : chatType ? `${name} ${CHAT_WORD[chatType]}` : name;
  const glyph = platform === 'local' ? '⌂' : chatType ? CHAT_GLYPH[chatType] : (platformInfo(platform)?.glyph ?? platform.slice(0, 1).toUpperCase());
  return (
    <span className={`platform-icon platform-${platform}${chatType ? ` chat-${chatType}` : ''}`} role="img" aria-label={label} title={label}>
      {glyph}
    </span>
  );
}
