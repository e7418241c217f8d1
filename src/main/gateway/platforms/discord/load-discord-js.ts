import { loadOnce } from '../../load-once';

/**
 * discord.js, loaded when a Discord connection (or its Test connection)
 * starts: importing it takes most of a second, which a gateway without Discord
 * should not pay at every start (a takeover after a crash waits for it).
 */
export type DiscordJs = typeof import('discord.js');

export const loadDiscordJs = loadOnce((): Promise<DiscordJs> => import('discord.js'));

/** The REST routes Homing uses (discord.js `Routes`, written out so they need no import). */
export const routes = {
  channelMessages: (channelId: string) => `/channels/${channelId}/messages` as const,
  channelMessage: (channelId: string, messageId: string) => `/channels/${channelId}/messages/${messageId}` as const,
  channelTyping: (channelId: string) => `/channels/${channelId}/typing` as const,
  me: () => '/users/@me' as const,
};
