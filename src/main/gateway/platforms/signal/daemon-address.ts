/**
 * Where the signal-cli daemon listens, from the `daemon` setting. signal-cli
 * offers a TCP socket (`--tcp [HOST:PORT]`, default localhost:7583), a UNIX
 * socket (`--socket [PATH]`) and HTTP (`--http`); Homing speaks the line
 * protocol of the first two (one JSON-RPC object per line; man
 * signal-cli-jsonrpc(5), "Basic usage"). HTTP is refused in words: its events
 * come as a push stream, and Homing pulls messages one at a time (intake.ts).
 */
export type DaemonAddress = { readonly kind: 'tcp'; readonly host: string; readonly port: number } | { readonly kind: 'unix'; readonly path: string };

export function parseDaemonAddress(value: string): { ok: true; address: DaemonAddress } | { ok: false; error: string } {
  const text = value.trim();
  if (/^https?:\/\//i.test(text)) {
    return { ok: false, error: 'Homing speaks to signal-cli over its TCP or UNIX socket, not HTTP: start the daemon with --tcp 127.0.0.1:7583 (or --socket) and give that address' };
  }
  const unix = /^unix:(.+)$/i.exec(text) ?? (text.startsWith('/') ? [text, text] : null);
  if (unix) {
    const path = unix[1]!;
    if (!path.startsWith('/')) return { ok: false, error: 'a UNIX socket must be an absolute path, like unix:/run/user/1000/signal-cli/socket' };
    return { ok: true, address: { kind: 'unix', path } };
  }
  const tcp = /^(?:tcp:\/\/)?(\[[0-9a-f:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/i.exec(text);
  if (!tcp) return { ok: false, error: 'must be tcp://HOST:PORT (like tcp://127.0.0.1:7583) or unix:/path/to/socket' };
  const port = Number(tcp[2]);
  if (port < 1 || port > 65_535) return { ok: false, error: 'the port must be between 1 and 65535' };
  return { ok: true, address: { kind: 'tcp', host: tcp[1]!.replace(/^\[|\]$/g, ''), port } };
}

/** The address as the log and the window may show it. */
export function describeAddress(address: DaemonAddress): string {
  return address.kind === 'tcp' ? `${address.host}:${address.port}` : address.path;
}
