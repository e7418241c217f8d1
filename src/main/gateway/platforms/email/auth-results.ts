/**
 * What the receiving mail server says about a message's sender, from its
 * `Authentication-Results` header (RFC 8601): SPF, DKIM and DMARC results.
 *
 * Anyone can write such a header into a message, so only one from a server
 * Homing trusts counts: the topmost header carrying a trusted authserv-id (the
 * header's first word, RFC 8601 §2.2). The receiving server adds its own on
 * top and removes those carrying its id that came from outside (§5), so the
 * topmost one with its id is its own. Without a trusted id no header is
 * believed: where the receiving server adds none (plain postfix + dovecot),
 * the topmost header is the sender's own, and it may say anything.
 */

export type AuthVerdict = 'pass' | 'fail' | 'none';

export interface AuthResults {
  /** The server that vouched, or undefined when no header from a trusted server was found. */
  readonly server: string | undefined;
  /** The authserv-ids of the headers not believed (not trusted), for the description. */
  readonly ignored: readonly string[];
  readonly spf: string | undefined;
  /** The domain SPF checked (the envelope sender's). */
  readonly spfDomain: string | undefined;
  /** Each DKIM signature's result and signing domain. */
  readonly dkim: readonly { readonly result: string; readonly domain: string | undefined }[];
  readonly dmarc: string | undefined;
  /**
   * `pass`: the From domain is vouched for (DMARC pass, or an SPF/DKIM pass for
   * the From domain); `fail`: the server says the sender is not who From says
   * (DMARC fail, or SPF/DKIM failing with no pass); `none`: nothing either way.
   */
  readonly verdict: AuthVerdict;
}

const MAX_HEADER_CHARS = 8_000;

/**
 * The results for a message from `fromAddress`, given its `Authentication-Results`
 * values top to bottom and the authserv-ids to believe (lower case).
 */
export function readAuthResults(headers: readonly string[], fromAddress: string | undefined, trustedServers: readonly string[]): AuthResults {
  const parsed = headers.map((value) => parseHeader(value.slice(0, MAX_HEADER_CHARS))).filter((header) => header !== undefined);
  const chosen = parsed.find((header) => trustedServers.includes(header.server.toLowerCase()));
  const ignored = [...new Set(parsed.filter((header) => header !== chosen).map((header) => header.server.toLowerCase().slice(0, 100)))].slice(0, 5);
  if (!chosen) return { server: undefined, ignored, spf: undefined, spfDomain: undefined, dkim: [], dmarc: undefined, verdict: 'none' };
  const spf = chosen.results.find((result) => result.method === 'spf');
  const dmarc = chosen.results.find((result) => result.method === 'dmarc');
  const dkim = chosen.results
    .filter((result) => result.method === 'dkim')
    .map((result) => ({ result: result.result, domain: result.props['header.d'] ?? domainOf(result.props['header.i']) }));
  const spfDomain = domainOf(spf?.props['smtp.mailfrom']) ?? spf?.props['smtp.helo'];
  const fromDomain = domainOf(fromAddress);
  const aligned = (domain: string | undefined) => domain !== undefined && fromDomain !== undefined && sameOrganisation(domain.toLowerCase(), fromDomain);
  const anyPass = dmarc?.result === 'pass' || dkim.some((sig) => sig.result === 'pass' && aligned(sig.domain)) || (spf?.result === 'pass' && aligned(spfDomain));
  const anyFail = dmarc?.result === 'fail' || spf?.result === 'fail' || spf?.result === 'softfail' || dkim.some((sig) => sig.result === 'fail');
  const verdict: AuthVerdict = dmarc?.result === 'fail' ? 'fail' : anyPass ? 'pass' : anyFail ? 'fail' : 'none';
  return { server: chosen.server, ignored, spf: spf?.result, spfDomain, dkim, dmarc: dmarc?.result, verdict };
}

/** "SPF pass (example.org), DKIM pass (example.org), DMARC pass", for the agent and the log. */
export function describeAuthResults(results: AuthResults): string {
  if (results.server === undefined) {
    if (results.ignored.length === 0) return 'not checked (no Authentication-Results from a trusted mail server) — sender not verified';
    return `not checked: Authentication-Results from ${results.ignored.join(', ')} not believed (not a trusted mail server: email.trustedAuthServId) — sender not verified`;
  }
  const parts: string[] = [];
  if (results.spf !== undefined) parts.push(`SPF ${results.spf}${results.spfDomain ? ` (${results.spfDomain})` : ''}`);
  for (const sig of results.dkim) parts.push(`DKIM ${sig.result}${sig.domain ? ` (${sig.domain})` : ''}`);
  if (results.dmarc !== undefined) parts.push(`DMARC ${results.dmarc}`);
  const said = parts.length > 0 ? parts.join(', ') : 'no results';
  const verdict = results.verdict === 'pass' ? 'sender verified' : results.verdict === 'fail' ? 'SENDER NOT VERIFIED: the From address may be forged' : 'sender not verified';
  return `${said} — ${verdict}, says ${results.server}`;
}

interface ParsedHeader {
  readonly server: string;
  readonly results: readonly { readonly method: string; readonly result: string; readonly props: Readonly<Record<string, string>> }[];
}

function parseHeader(value: string): ParsedHeader | undefined {
  const text = stripComments(value.replace(/\r?\n[ \t]+/g, ' '));
  const [head, ...rest] = text.split(';');
  const server = head?.trim().split(/\s+/)[0];
  if (!server || !/^[A-Za-z0-9.-]+$/.test(server)) return undefined;
  const results = [];
  for (const part of rest) {
    const tokens = part.trim().split(/\s+/).filter(Boolean);
    const first = /^([A-Za-z0-9_-]+)(?:\/\d+)?=([A-Za-z]+)$/.exec(tokens[0] ?? '');
    if (!first) continue;
    const props: Record<string, string> = {};
    for (const token of tokens.slice(1)) {
      const prop = /^([A-Za-z]+\.[A-Za-z0-9_-]+)=(.+)$/.exec(token);
      if (prop) props[prop[1]!.toLowerCase()] = prop[2]!.replace(/^"|"$/g, '');
    }
    results.push({ method: first[1]!.toLowerCase(), result: first[2]!.toLowerCase(), props });
  }
  return { server, results };
}

/** RFC 5322 comments (`(…)`, nested), which may hold anything, including `;`. */
function stripComments(text: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && depth > 0) i++;
    else if (char === '(') depth++;
    else if (char === ')' && depth > 0) depth--;
    else if (depth === 0) out += char;
  }
  return out;
}

function domainOf(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const at = address.lastIndexOf('@');
  const domain = (at >= 0 ? address.slice(at + 1) : address).trim().toLowerCase().replace(/>$/, '');
  return /^[a-z0-9.-]+$/.test(domain) && domain.includes('.') ? domain : undefined;
}

/** Relaxed alignment, simply: the same domain, or one a subdomain of the other. */
function sameOrganisation(a: string, b: string): boolean {
  return a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);
}
