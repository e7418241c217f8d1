/** "3 min ago", "2 h ago", "yesterday": ages a glance can read. */
export function ago(at: number, now: number): string {
  const seconds = Math.round((now - at) / 1000);
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return days === 1 ? 'yesterday' : `${days} days ago`;
}

/** "in 8 min", "now". */
export function until(at: number, now: number): string {
  const seconds = Math.round((at - now) / 1000);
  if (seconds <= 5) return 'now';
  if (seconds < 60) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `in ${minutes} min`;
  return `in ${Math.round(minutes / 60)} h`;
}

export function duration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h ${minutes % 60} min`;
}

/** Built once: a formatter is costly to make, and lists format hundreds of times. */
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/** "14:05" (or "2:05 PM"), in the reader's locale. */
export function clockTime(at: number): string {
  return CLOCK.format(at);
}

const DAY = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long' });
const DAY_WITH_YEAR = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'long', year: 'numeric' });

export function sameDay(a: number, b: number): boolean {
  return new Date(a).toDateString() === new Date(b).toDateString();
}

/** "Today", "Yesterday", "Monday 30 November", or with the year when it is another year: the transcript's day separators. */
export function dayLabel(at: number, now: number): string {
  if (sameDay(at, now)) return 'Today';
  if (sameDay(at, now - 86_400_000)) return 'Yesterday';
  return new Date(at).getFullYear() === new Date(now).getFullYear() ? DAY.format(at) : DAY_WITH_YEAR.format(at);
}

/** "512 bytes", "3.4 kB", "1.2 MB", "20 MB": decimal units, as the gateway's limits are (a 20 MB limit is 20 000 000 bytes). */
export function fileSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  // The next unit from where the rounded number would read 1000.
  const [value, unit] = bytes < 999_500 ? [bytes / 1e3, 'kB'] : bytes < 999_500_000 ? [bytes / 1e6, 'MB'] : [bytes / 1e9, 'GB'];
  // One decimal while it says something (1.2 MB), none from 10 up (20 MB), and never "1.0".
  const shown = value < 9.95 ? Number(value.toFixed(1)) : Math.round(value);
  return `${shown} ${unit}`;
}

/** A voice note's length: "0:07", "2:45", "1:02:03". */
export function clipLength(seconds: number): string {
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
