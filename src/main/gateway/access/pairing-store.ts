import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { PairedSender, PairingFlood, PairingOverview } from '../../../shared/api';
import type { Clock } from '../clock';
import { rateLimitedLogger, type Logger } from '../logger';
import { readJsonOrMoveAside, writePrivateFile } from '../private-file';

/**
 * Pairing: nobody talks to the agent until its owner allows them. An unknown
 * sender is owed a short code; the platform's adapter tells it when its reply
 * budget allows (access/pairing-teller.ts) and only then marks it told, so
 * nobody is counted as told who heard nothing. A sender is told again at most
 * once an hour. Nothing of theirs reaches the agent; the owner approves or
 * denies the code in the window or with `homing pairing approve|deny`.
 *
 * A flood of strangers cannot push anyone out: a request, once kept, stays
 * until it is decided or expires; past MAX_PENDING on one platform new senders
 * are only counted (the window shows the counts), not kept and not told.
 *
 * Kept in `<dataDir>/pairing.json` (0600, atomic writes), owed codes included,
 * so they are told after a restart. Raw ids are there because the adapter must
 * match them; the window and the CLI show the sender's display name and a
 * pseudonym, never the raw id.
 */

export const PAIRING_FILE = 'pairing.json';
/**
 * Pending requests kept per platform; past it new senders are only counted. It
 * bounds pairing.json, and is well above the few dozen a burst of throwaway
 * nicks brings, so a person who writes after such a burst is still kept.
 */
export const MAX_PENDING = 200;
/** More new senders than this on one platform within FLOOD_WINDOW_MS is shown as a flood. */
const FLOOD_THRESHOLD = 10;
const FLOOD_WINDOW_MS = 60 * 60 * 1000;
/** Not-kept arrivals remembered per platform (their times, for the flood count); beyond it the count stops growing. */
const MAX_NOT_KEPT_TIMES = 10_000;
/** A pending code is repeated to its sender at most this often. */
const RETELL_MS = 60 * 60 * 1000;
/** A request nobody decided on is forgotten after this. */
const REQUEST_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** No 0/O, 1/I/L: read out over a phone. */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;

const name = z.string().max(1024);
const requestSchema = z.object({
  platform: z.string(),
  senderId: z.string(),
  chatId: z.string(),
  name: name.nullable(),
  code: z.string(),
  requestedAt: z.number(),
  /** When the code last went out; null while it is owed (never told, or asked again after RETELL_MS). */
  toldAt: z.number().nullable(),
});
const fileSchema = z.object({
  v: z.literal(1),
  approved: z.array(z.object({ platform: z.string(), senderId: z.string(), name: name.nullable(), at: z.number() })),
  denied: z.array(z.object({ platform: z.string(), senderId: z.string(), name: name.nullable(), at: z.number() })),
  requests: z.array(requestSchema),
});
type PairingFile = z.output<typeof fileSchema>;
type StoredRequest = z.output<typeof requestSchema>;

/** What the window and the CLI see: names and pseudonyms, never raw ids (src/shared/api.ts). */
export type PairingView = PairingOverview;

/** A code the platform still has to tell its sender. */
export interface OwedCode {
  readonly senderId: string;
  readonly chatId: string;
  readonly code: string;
  readonly requestedAt: number;
}

export type PairingDecision = 'approve' | 'deny';
export type DecisionResult = { readonly ok: true; readonly name: string | null; readonly platform: string; readonly chatId: string; readonly senderId: string } | { readonly ok: false; readonly error: string };

export class PairingStore {
  private readonly file: string;
  private data: PairingFile;
  private readonly listeners = new Set<() => void>();
  /** Per platform, when senders who were not kept (the list was full) asked; memory only, for the flood count. */
  private readonly notKept = new Map<string, number[]>();
  /** Strangers decide how often a request is logged: each cause a few times a minute, the rest counted. */
  private readonly requestLog: Logger;

  constructor(
    dataDir: string,
    private readonly deps: { readonly clock: Clock; readonly logger: Logger; readonly pseudonym: (platform: string, senderId: string) => string; readonly random?: (max: number) => number },
  ) {
    this.requestLog = rateLimitedLogger(deps.logger);
    this.file = join(dataDir, PAIRING_FILE);
    const loaded = existsSync(this.file)
      ? readJsonOrMoveAside(this.file, fileSchema, (movedTo) => deps.logger.error('the pairing file could not be read; moved it aside (approvals must be given again)', { movedTo }))
      : undefined;
    this.data = loaded ?? { v: 1, approved: [], denied: [], requests: [] };
  }

  /** Told after every change (the window refreshes its list). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  isApproved(platform: string, senderId: string): boolean {
    return this.data.approved.some((entry) => entry.platform === platform && entry.senderId === senderId);
  }

  /**
   * An unknown sender wrote: their code when they are owed it now (new, not
   * told yet, or last told over an hour ago), for the adapter's teller to send;
   * undefined when they were told within the hour, were denied (then they are
   * not answered at all), or were not kept because the platform's list is full.
   * It never marks them told: `told` does, once the code went out.
   */
  request(platform: string, sender: { readonly id: string; readonly chatId: string; readonly name: string | undefined }): { code: string } | undefined {
    if (this.isApproved(platform, sender.id)) return undefined;
    if (this.data.denied.some((entry) => entry.platform === platform && entry.senderId === sender.id)) return undefined;
    const now = this.deps.clock.now();
    const requests = this.data.requests.filter((request) => now - request.requestedAt < REQUEST_TTL_MS);
    const existing = requests.find((request) => request.platform === platform && request.senderId === sender.id);
    if (existing) {
      if (existing.toldAt === null) {
        if (requests.length !== this.data.requests.length) this.write({ ...this.data, requests });
        return { code: existing.code };
      }
      if (now - existing.toldAt < RETELL_MS) {
        if (requests.length !== this.data.requests.length) this.write({ ...this.data, requests });
        return undefined;
      }
      this.write({ ...this.data, requests: requests.map((request) => (request === existing ? { ...request, toldAt: null } : request)) });
      return { code: existing.code };
    }
    if (requests.filter((request) => request.platform === platform).length >= MAX_PENDING) {
      // Keeping them would push out someone who asked earlier; counting them lets the window show the flood.
      const times = (this.notKept.get(platform) ?? []).filter((at) => now - at < FLOOD_WINDOW_MS);
      if (times.length < MAX_NOT_KEPT_TIMES) times.push(now);
      this.notKept.set(platform, times);
      if (times.length === 1) this.requestLog.warn('pairing: the list of waiting senders is full; new senders are counted, not kept', { platform, kept: MAX_PENDING });
      if (requests.length !== this.data.requests.length) this.write({ ...this.data, requests });
      // Every tenth, not every one: each change makes the window read the whole list again.
      else if (times.length % 10 === 1) this.changed();
      return undefined;
    }
    const code = this.newCode(requests);
    const fresh: StoredRequest = { platform, senderId: sender.id, chatId: sender.chatId, name: sender.name ?? null, code, requestedAt: now, toldAt: null };
    this.write({ ...this.data, requests: [...requests, fresh] });
    this.requestLog.info('pairing: a new sender asked to talk to the agent', { platform, sender: this.deps.pseudonym(platform, sender.id) });
    return { code };
  }

  /** The platform's codes still to be told, oldest request first (the teller decides the order it tells them in). */
  owed(platform: string): OwedCode[] {
    const now = this.deps.clock.now();
    return this.data.requests
      .filter((request) => request.platform === platform && request.toldAt === null && now - request.requestedAt < REQUEST_TTL_MS)
      .map((request) => ({ senderId: request.senderId, chatId: request.chatId, code: request.code, requestedAt: request.requestedAt }));
  }

  /** The adapter sent `code` to its sender: they count as told (for RETELL_MS) from now. */
  told(platform: string, senderId: string, code: string): void {
    const request = this.data.requests.find((entry) => entry.platform === platform && entry.senderId === senderId && entry.code === code);
    if (!request) return; // decided while the code was on its way
    const now = this.deps.clock.now();
    this.write({ ...this.data, requests: this.data.requests.map((entry) => (entry === request ? { ...entry, toldAt: now } : entry)) });
  }

  view(): PairingView {
    const show = (entry: { platform: string; senderId: string; name: string | null; at: number }): PairedSender => ({
      platform: entry.platform,
      name: entry.name,
      sender: this.deps.pseudonym(entry.platform, entry.senderId),
      at: entry.at,
    });
    return {
      requests: this.data.requests.map((request) => ({
        platform: request.platform,
        code: request.code,
        name: request.name,
        sender: this.deps.pseudonym(request.platform, request.senderId),
        requestedAt: request.requestedAt,
        told: request.toldAt !== null,
      })),
      approved: this.data.approved.map(show),
      denied: this.data.denied.map(show),
      floods: this.floods(),
    };
  }

  /**
   * Forgets the platform's requests of the last hour and its count of senders
   * not kept: the owner's way out of a flood that filled the list (otherwise
   * it stays full until its requests expire). Approvals and denials stay.
   */
  dismissFlood(platform: string): number {
    const now = this.deps.clock.now();
    const flood = (request: StoredRequest) => request.platform === platform && now - request.requestedAt < FLOOD_WINDOW_MS;
    const forgotten = this.data.requests.filter(flood).length;
    this.notKept.delete(platform);
    this.write({ ...this.data, requests: this.data.requests.filter((request) => !flood(request)) });
    this.deps.logger.info('pairing: the owner dismissed a flood of requests', { platform, forgotten });
    return forgotten;
  }

  /** Platforms where more new senders asked in the last hour than FLOOD_THRESHOLD, kept or not. */
  private floods(): PairingFlood[] {
    const now = this.deps.clock.now();
    const platforms = new Set([...this.data.requests.map((request) => request.platform), ...this.notKept.keys()]);
    const floods: PairingFlood[] = [];
    for (const platform of platforms) {
      const kept = this.data.requests.filter((request) => request.platform === platform && now - request.requestedAt < FLOOD_WINDOW_MS).map((request) => request.requestedAt);
      const notKept = (this.notKept.get(platform) ?? []).filter((at) => now - at < FLOOD_WINDOW_MS);
      const lastHour = kept.length + notKept.length;
      if (lastHour <= FLOOD_THRESHOLD) continue;
      floods.push({ platform, lastHour, notKept: notKept.length, since: Math.min(...kept, ...notKept) });
    }
    return floods;
  }

  /** Approves or denies a pending request by its code; approving a denied sender later needs a new request. */
  decide(code: string, decision: PairingDecision): DecisionResult {
    const wanted = code.trim().toUpperCase();
    const request = this.data.requests.find((entry) => entry.code === wanted);
    if (!request) return { ok: false, error: `no pending pairing request has the code ${JSON.stringify(code.slice(0, 32))}` };
    const entry = { platform: request.platform, senderId: request.senderId, name: request.name, at: this.deps.clock.now() };
    const others = (list: PairingFile['approved']) => list.filter((item) => !(item.platform === entry.platform && item.senderId === entry.senderId));
    this.write({
      v: 1,
      requests: this.data.requests.filter((item) => item !== request),
      approved: decision === 'approve' ? [...others(this.data.approved), entry] : others(this.data.approved),
      denied: decision === 'deny' ? [...others(this.data.denied), entry] : others(this.data.denied),
    });
    this.deps.logger.info(`pairing: ${decision === 'approve' ? 'approved' : 'denied'} a sender`, { platform: entry.platform, sender: this.deps.pseudonym(entry.platform, entry.senderId) });
    return { ok: true, name: request.name, platform: request.platform, chatId: request.chatId, senderId: request.senderId };
  }

  /** Takes back an approval (or a denial) by the sender's pseudonym. */
  revoke(platform: string, sender: string): boolean {
    const keep = (list: PairingFile['approved']) => list.filter((item) => !(item.platform === platform && this.deps.pseudonym(item.platform, item.senderId) === sender));
    const approved = keep(this.data.approved);
    const denied = keep(this.data.denied);
    if (approved.length === this.data.approved.length && denied.length === this.data.denied.length) return false;
    this.write({ ...this.data, approved, denied });
    return true;
  }

  private newCode(requests: readonly StoredRequest[]): string {
    const random = this.deps.random ?? randomInt;
    for (;;) {
      let code = '';
      for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[random(ALPHABET.length)];
      if (!requests.some((request) => request.code === code)) return code;
    }
  }

  private write(next: PairingFile): void {
    this.data = next;
    writePrivateFile(this.file, JSON.stringify(next, null, 1) + '\n');
    this.changed();
  }

  private changed(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (error) {
        this.deps.logger.error('pairing: a listener threw', { error });
      }
    }
  }
}
