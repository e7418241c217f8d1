/**
 * The agent's Markdown for Discord, whose Markdown is close enough to send as
 * it is, except for what would ping: `@everyone` and `@here` get a fullwidth
 * at sign (the same length in UTF-16, so a chunk sized for the limit stays
 * within it). User and role mentions (`<@id>`, `<@&id>`) are left as text;
 * the send's `allowed_mentions: { parse: [] }` makes sure nothing in the
 * agent's text pings anyone.
 */
export function toDiscordText(markdown: string): string {
  return markdown.replace(/@(everyone|here)\b/gi, '\uFF20$1');
}
