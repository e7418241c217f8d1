/** A small badge per platform (text, not an image: no external resources, readable by screen readers via its label). */
export function PlatformIcon({ platform }: { platform: string }) {
  const label = platform === 'local' ? 'Local chat' : platform === 'irc' ? 'IRC' : platform === 'telegram' ? 'Telegram' : platform;
  const glyph = platform === 'local' ? '⌂' : platform === 'irc' ? '#' : platform === 'telegram' ? '✈' : platform.slice(0, 1).toUpperCase();
  return (
    <span className={`platform-icon platform-${platform}`} role="img" aria-label={label} title={label}>
      {glyph}
    </span>
  );
}
