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
