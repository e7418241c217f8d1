import { basename, join } from 'node:path';
import type { ConfigView, GatewayMode, GatewayOverview, GatewayState, GatewayStatus, UpdateNotice } from '../../shared/api';
import type { Agent } from './agents/agent';
import { turnTimeoutMs } from './agents/config-schema';
import { createAgent } from './agents/create-agent';
import { detectOllama } from './agents/openai';
import { trackAgentProcesses } from './agents/process-records';
import { reapOrphanedAgents } from './agents/reap-orphans';
import { pairingApiHandlers } from './access/api-handlers';
import { PairingStore } from './access/pairing-store';
import { ApiServer, type ApiHandlers } from './api/server';
import { systemClock, type Clock } from './clock';
import { ConfigService } from './config/config-service';
import { ledgerPolicy } from './config/delivery-policy';
import { homingConfigSchema, type HomingConfig } from './homing-config';
import { ensureDataDir } from './data-dir';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock';
import { controlSocketPath, serveControlSocket, type ControlSocket } from './control-socket';
import { CommitGroup } from './db/commit-group';
import { openDatabase, type Db } from './db/database';
import { homingMigrations } from './db/migrations';
import { deliveryApiHandlers } from './delivery/api-handlers';
import { DeliveryService } from './delivery/delivery-service';
import { EventBus } from './events';
import { EMPTY_COUNTS } from './ledger';
import type { Logger } from './logger';
import { ConversationQueue } from './pipeline/conversation-queue';
import { localTimeZone, readInstructions } from './pipeline/conversation-context';
import { Pipeline, type AnsweringAgent, type RouteSubject } from './pipeline/pipeline';
import { localChatApiHandlers } from './pipeline/api-handlers';
import { platformApiHandlers } from './platforms/api-handlers';
import { configApiHandlers } from './config/api-handlers';
import { secretApiHandlers } from './secrets/api-handlers';
import { recoverInterruptedTurns, type RecoveryReport } from './pipeline/recovery';
import { platformWanted, type PlatformTuning } from './platforms/catalog';
import { digest } from './platforms/platform-module';
import { withIntakeHold } from './intake-hold';
import { LogTail, teeLogger } from './log-tail';
import { LocalAdapter } from './platforms/local/local-adapter';
import { PlatformManager } from './platforms/manager';
import { SleepDetector } from './power/sleep-detector';
import { FileSecretStore, type SecretStore } from './secrets/secret-store';
import { sessionApiHandlers } from './session/api-handlers';
import { openSessionStore } from './session/open-store';
import { loadOrCreateInstallSecret } from './session/install-secret';
import { createPseudonymiser, type Pseudonymiser } from './session/pseudonyms';
import { renameRawSessionKeys } from './session/rename-keys';
import { matchRoute, type Route } from './routing/routing';
import type { SessionStore } from './session/store';
import { scheduleApiHandlers } from './schedules/api-handlers';
import { answerScheduleCommand } from './schedules/chat-commands';
import { Schedules } from './schedules/schedules';
import { releaseWatchFor, type HeadlessUpdateCheck, type ReleaseWatch } from './updates/release-watch';
import { MediaStore } from './media/media-store';
import { mediaLimits } from './media/media-for-agent';
import { MediaUpkeep } from './media/media-upkeep';
import { mediaApiHandlers } from './media/api-handlers';
import { LocalUploads } from './media/local-uploads';

/**
 * How long a stop may take for the turns and the sends, together: under a
 * service manager's SIGTERM the gateway is gone within ~5 s whatever the load
 * (what is cut short is saved and finished by the next start).
 */
export const STOP_DEADLINE_MS = 3_500;

export interface GatewayOptions {
  readonly dataDir: string;
  readonly mode: GatewayMode;
  readonly version: string;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** The pseudonym key from safeStorage (tray app); without it, `<dataDir>/install-secret` is used. */
  readonly installSecret?: Uint8Array;
  /** Default `<dataDir>/config.json`. */
  readonly configFile?: string;
  /** Default `<dataDir>/secrets.json`; the tray app may pass a safeStorage-backed store. */
  readonly secrets?: SecretStore;
  /** Where `apiKeyEnv` / `passwordEnv` are looked up (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** Adapter timing for tests (IRC pacing, backoff). */
  readonly tuning?: PlatformTuning;
  /** Detect a resume from sleep by clock comparison (headless has no OS hook). Default true. */
  readonly detectSleep?: boolean;
  /** Looks for an Ollama server at first run (no config.json). Default true; tests turn it off. */
  readonly detectOllama?: (() => Promise<string[] | undefined>) | false;
  /**
   * Default `<dataDir>/homing.db`. `':memory:'` keeps nothing across a restart: only
   * for measuring what durability costs (npm run bench), never for use.
   */
  readonly databaseFile?: string;
  /** The data directory's lock, when the caller took it already (the CLI does, before loading the gateway). */
  readonly lock?: DataDirLock;
  /**
   * Headless only: the update check's feed and timing (updates/release-watch.ts);
   * false: none. It is off as well with `autoUpdate: false`, and with
   * HOMING_NO_UPDATE_CHECK=1 in `env`.
   */
  readonly updateCheck?: HeadlessUpdateCheck | false;
}

/**
 * The gateway core: owns the data directory, the database, the configuration,
 * the platforms, the agent and the message pipeline, and answers the API. It
 * runs in a process of its own (a utilityProcess under the tray app, plain Node
 * in headless mode) and never imports electron.
 */
export class Gateway {
  readonly bus: EventBus;
  readonly api: ApiServer;
  readonly db: Db;
  /** The delivery ledger, the send loop and the deliverable platforms. */
  readonly deliveries: DeliveryService;
  readonly platforms: PlatformManager;
  readonly pipeline: Pipeline;
  /** Fetched photos, voice notes and files (media/), and their retention sweep. */
  readonly media: MediaStore;
  private readonly mediaUpkeep: MediaUpkeep;
  /** Files the window's own chat sends, until their message takes them. */
  private readonly uploads: LocalUploads;
  readonly config: ConfigService<HomingConfig>;
  readonly local: LocalAdapter;
  readonly secrets: SecretStore;
  /** Who may talk to the agent: pairing requests and approved senders. */
  readonly pairing: PairingStore;
  /** The schedules: the assistant writes first (schedules/). */
  readonly schedules: Schedules;
  /** Resolves once platforms are started and interrupted turns are recovered. */
  readonly ready: Promise<void>;
  private sessionStore: SessionStore;
  /** The session settings the store was opened with (a config change that keeps them keeps the store). */
  private sessionSettings: string;
  private agent: { agent: Agent; timeoutMs: number; fingerprint: string };
  private state: GatewayState = 'starting';
  private readonly startedAt: number;
  private readonly startedMonotonic: number;
  readonly clock: Clock;
  private readonly queue: ConversationQueue;
  private readonly group: CommitGroup;
  private readonly sleep: SleepDetector;
  private suggestion: ConfigView['suggestion'] = null;
  private control: ControlSocket | undefined;
  /** Headless: the update check; the tray app's main process reports updates itself (setUpdate). */
  private readonly releases: ReleaseWatch | undefined;
  private update: UpdateNotice | null = null;
  /** The last log lines (getLogTail). */
  logTail = new LogTail();

  private constructor(
    private readonly options: GatewayOptions,
    db: Db,
    /** This process's hold on the data directory: one gateway per directory. */
    readonly lock: DataDirLock,
  ) {
    const { logger, dataDir } = options;
    this.clock = options.clock ?? systemClock;
    this.startedAt = this.clock.now();
    this.startedMonotonic = this.clock.monotonic();
    this.db = db;
    this.bus = new EventBus(logger);
    this.secrets = options.secrets ?? new FileSecretStore(dataDir, logger);
    this.config = new ConfigService(options.configFile ?? join(dataDir, 'config.json'), logger, (config, error) => this.onConfig(config, error), {
      schema: homingConfigSchema,
    });
    const config = this.config.current;
    const pseudonyms = createPseudonymiser(options.installSecret ?? loadOrCreateInstallSecret(dataDir));
    // Keys written before they were pseudonymous are renamed before any conversation is looked up.
    renameRawSessionKeys(db, pseudonyms, logger, this.clock.now());
    this.pairing = new PairingStore(dataDir, { clock: this.clock, logger, pseudonym: (platform, senderId) => pseudonyms.person(platform, senderId) });
    this.pairing.onChange(() => this.bus.emit({ type: 'pairing.changed', at: this.clock.now() }));
    this.queue = new ConversationQueue(config.maxConcurrentTurns);
    // One group commit for the ledger and the session index: every
    // conversation's writes of one event-loop turn share a commit (and an fsync).
    this.group = new CommitGroup(db);
    this.sessionStore = this.openSessions(config);
    this.sessionSettings = JSON.stringify(config.sessions);
    this.agent = this.buildAgent(config);
    this.sleep = new SleepDetector({
      clock: this.clock,
      onResume: (sleptMs) => void this.resumed(sleptMs),
      onClockChange: (jumpMs) => {
        logger.info("the computer's clock changed", { jumpMs });
        void this.schedules.scheduler.wake('clock');
      },
      onStall: (stalledMs) => logger.warn('the event loop was blocked (a stall, not a sleep: counted as awake time)', { stalledMs }),
    });
    // Registers this process's ledger instance, starts its heartbeat and sweep
    // timers (unref'd) and sweeps once; platforms join as they connect.
    this.deliveries = DeliveryService.start({
      suspendedMs: () => this.sleep.suspendedMs(),
      db,
      clock: this.clock,
      logger,
      bus: this.bus,
      policy: ledgerPolicy(config.delivery),
      // The lock says no other gateway runs here: rows of instances that did not
      // stop cleanly are claimable at once, with no lease to wait out.
      exclusive: true,
      group: this.group,
      limitsOf: (platform) => this.platforms.get(platform)?.limits,
    });
    this.media = new MediaStore(dataDir, this.clock);
    this.uploads = new LocalUploads(dataDir);
    this.mediaUpkeep = new MediaUpkeep(this.media, this.uploads, () => this.config.current.media.keepDays * 86_400_000, this.clock, logger);
    this.pipeline = new Pipeline({
      sessions: () => this.sessionStore,
      deliveries: this.deliveries,
      agent: (subject) => this.answering(subject, pseudonyms),
      adapter: (platform) => this.platforms.get(platform),
      queue: this.queue,
      bus: this.bus,
      logger,
      clock: this.clock,
      contextTurns: () => this.config.current.sessions.contextTurns,
      contextTokens: () => this.config.current.sessions.contextTokens,
      instructions: () => readInstructions(join(dataDir, INSTRUCTIONS_FILE)),
      scheduleCommand: (command, where) => answerScheduleCommand(this.schedules, command, where, { now: this.clock.now(), zone: localTimeZone() }),
      media: {
        store: this.media,
        limits: () => mediaLimits(this.config.current.media),
        speech: () => this.config.current.speech,
      },
    });
    this.schedules = new Schedules({
      db,
      clock: this.clock,
      logger,
      sessions: () => this.sessionStore,
      run: (run) => this.pipeline.runScheduled(run),
      recordedReply: (sessionKey, messageRef) => this.deliveries.ledger.replyFor(sessionKey, messageRef)?.id,
      zone: localTimeZone,
      onChange: () => this.bus.emit({ type: 'schedules.changed', at: this.clock.now() }),
    });
    this.platforms = new PlatformManager({
      bus: this.bus,
      logger,
      clock: this.clock,
      onMessage: withIntakeHold(this.env, (message, ack) => void this.pipeline.handle(message, ack)),
      onConnected: (sender) => this.deliveries.registerPlatform(sender),
      onReachable: () => void this.deliveries.sweepNow(),
    });
    this.local = new LocalAdapter(() => {}, undefined, (offer, { maxBytes }) => this.uploads.open(offer.source, maxBytes));
    this.releases = releaseWatchFor({
      mode: options.mode,
      env: this.env,
      version: options.version,
      logger,
      check: options.updateCheck,
      onNotice: (notice) => this.setUpdate(notice),
    });
    this.api = new ApiServer(committedFirst(this.handlers(), this.group), this.bus, logger);
    this.ready = this.boot();
  }

  /** Starts the gateway; throws DataDirLocked (naming the running one) when another gateway holds the data directory. */
  static start(given: GatewayOptions): Gateway {
    // Every line the gateway logs is also kept for the window's Logs panel.
    const logTail = new LogTail();
    const options = { ...given, logger: teeLogger(given.logger, logTail) };
    ensureDataDir(options.dataDir, options.logger);
    const lock = options.lock ?? acquireDataDirLock(options.dataDir, { mode: options.mode });
    let db: Db | undefined;
    let gateway: Gateway;
    try {
      db = openDatabase(options.databaseFile ?? join(options.dataDir, 'homing.db'), { migrations: homingMigrations });
      // Before any turn runs (recovery re-runs interrupted ones): agents a killed gateway left running die first.
      reapOrphanedAgents(db, options.logger);
      gateway = new Gateway(options, db, lock);
      gateway.logTail = logTail;
    } catch (error) {
      db?.close();
      lock.release();
      throw error;
    }
    options.logger.info('gateway starting', { dataDir: options.dataDir, mode: options.mode, pid: process.pid });
    return gateway;
  }

  /** Where `apiKeyEnv` / `passwordEnv` are looked up. */
  get env(): NodeJS.ProcessEnv {
    return this.options.env ?? process.env;
  }

  get sessions(): SessionStore {
    return this.sessionStore;
  }

  getStatus(): GatewayStatus {
    return {
      version: this.options.version,
      mode: this.options.mode,
      state: this.state,
      dataDir: this.options.dataDir,
      pid: process.pid,
      startedAt: this.startedAt,
      uptimeMs: Math.max(0, Math.round(this.clock.monotonic() - this.startedMonotonic)),
    };
  }

  getOverview(): GatewayOverview {
    const counts = this.deliveries.deliverer.guard('stateCounts', '-', () => this.deliveries.ledger.stateCounts(this.clock.now())) ?? EMPTY_COUNTS;
    return {
      state: this.state,
      deliveries: { ...counts, owed: counts.pending + counts.attempting + counts.failed },
      turnsRunning: this.pipeline.turnsRunning,
      platforms: this.platforms.list(),
      ledger: this.deliveries.ledgerHealth(),
      lastSweep: this.deliveries.lastSweep(),
      configError: this.config.lastError,
      update: this.update,
      media: { ...this.mediaUpkeep.usage(), keepDays: this.config.current.media.keepDays },
    };
  }

  /** A newer release to tell the window about (its banner), or null; the tray app's main process sets it. */
  setUpdate(notice: UpdateNotice | null): void {
    this.update = notice;
  }

  configView(): ConfigView {
    return this.config.view(this.secrets.names(), this.config.exists() ? null : this.suggestion);
  }

  /** Rebuilds the agent and platforms from the current config (after a secret changed), in turn with config changes. */
  refresh(): Promise<void> {
    return this.config.serialized(() => this.onConfig(this.config.current, null, true));
  }

  /**
   * Pauses or resumes the chat platforms (the tray's Pause, and the machine
   * suspending). Owed replies wait in the ledger; a resume reconnects, and each
   * platform's connect sweeps for it.
   */
  async setPaused(paused: boolean): Promise<void> {
    await this.ready.catch(() => undefined);
    await this.platforms.setPaused(paused);
    this.options.logger.info(paused ? 'platforms paused' : 'platforms resumed');
  }

  /** Called by the tray app on `resume` (headless mode detects it itself): reconnect and sweep. */
  async resumed(sleptMs: number): Promise<void> {
    this.options.logger.info('resumed from sleep', { sleptMs });
    this.bus.emit({ type: 'gateway.resumed', sleptMs, at: this.clock.now() });
    await this.platforms.probeAll();
    this.deliveries.sweepNow();
    await this.schedules.scheduler.wake('asleep');
  }

  /**
   * Stops taking messages, gives running turns and sends `deadlineMs` to finish,
   * and leaves whatever is still owed to the ledger for the next start.
   */
  async stop(deadlineMs = STOP_DEADLINE_MS): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.setState('stopping');
    // One deadline for the whole stop, shared by the turns and the sends.
    const until = this.clock.monotonic() + deadlineMs;
    const left = () => Math.max(0, until - this.clock.monotonic());
    // No API work while stopping: what waits is dropped, the windows are disconnected.
    const droppedRequests = this.api.closeAll();
    await this.ready.catch(() => undefined);
    this.sleep.stop();
    this.schedules.scheduler.stop();
    this.mediaUpkeep.stop();
    this.releases?.stop();
    this.config.unwatch();
    await this.control?.close();
    const turnsCutShort = await this.pipeline.stop(left());
    const stillSending = await this.deliveries.stop(left());
    await this.platforms.stopAll();
    await this.agent.agent.close().catch(() => undefined);
    // A window that connected while the stop ran (the tray app hands ports over until it quits).
    this.api.closeAll();
    this.group.close();
    this.sessionStore.close();
    this.db.close();
    this.lock.release();
    this.setState('stopped');
    // What the stop left for the next start, said once: messages cut short are answered then, replies still owed sent then.
    this.options.logger.info('gateway stopped', { droppedRequests, turnsCutShort, conversationsStillSending: stillSending });
  }

  private async boot(): Promise<void> {
    // The adapters are set up at once (their limits cut recovered replies) and
    // connect in the background; the local chat connects first.
    const connected = this.platforms.apply(this.wantedPlatforms(this.config.current));
    // Recovery queues the saved, unanswered messages before any new one can
    // arrive, so each conversation answers its oldest first.
    let report: RecoveryReport | undefined;
    try {
      const recovery = recoverInterruptedTurns({
        db: this.db,
        sessions: this.sessionStore,
        ledger: this.deliveries.ledger,
        pipeline: this.pipeline,
        clock: this.clock,
        logger: this.options.logger,
        powerLoss: this.deliveries.ledger.tookOver.fromAnotherBoot > 0,
      });
      report = recovery.report;
      // Not awaited: a long re-run must not hold up new messages (it keeps its place in its conversation's queue).
      void recovery.answered.catch((error: unknown) => this.options.logger.error('an interrupted turn failed again', { error }));
    } catch (error) {
      this.options.logger.error('recovering interrupted turns failed', { error });
    }
    if (report && report.rerun + report.told + report.restored > 0) {
      this.options.logger.info('recovered interrupted turns', { ...report });
    }
    await connected;
    // After recovery queued the saved messages: a run a crash cut short is found saved, and answered once.
    await this.schedules.scheduler.start().catch((error: unknown) => this.options.logger.error('the schedules could not start', { error }));
    this.mediaUpkeep.start();
    try {
      const path = controlSocketPath(this.options.dataDir);
      this.control = await serveControlSocket(path, (method, params) => this.api.dispatch(method, params), this.options.logger);
      this.lock.update({ socket: path });
    } catch (error) {
      // `homing deliveries retry|discard` and `homing sweep` then say the gateway cannot be reached.
      this.options.logger.warn('the control socket could not be opened', { error });
    }
    await this.suggestAgent();
    if (this.options.detectSleep ?? true) this.sleep.start();
    this.config.watch();
    if (this.state === 'starting') {
      this.setState('running');
      this.releases?.setEnabled(this.config.current.autoUpdate);
    }
    this.options.logger.info('gateway running', { platforms: this.platforms.list().map((platform) => platform.name) });
  }

  /** At first run, offers a local Ollama server if one answers (the user decides; nothing is written). */
  private async suggestAgent(): Promise<void> {
    const detect = this.options.detectOllama ?? (() => detectOllama());
    if (detect === false || this.config.exists()) return;
    const models = await detect().catch(() => undefined);
    const model = models?.[0];
    if (!model) return;
    const agent = { type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model };
    this.suggestion = { agent, reason: `an Ollama server answers on 127.0.0.1:11434 with ${models.length} model(s)` };
    this.options.logger.info(`An Ollama server answers on 127.0.0.1:11434. To use it, put this in ${this.config.file}: ${JSON.stringify({ agent })}`);
  }

  /** Applies a config; ConfigService awaits each call before the next, so changes never overtake each other. */
  private async onConfig(config: HomingConfig, error: string | null, quiet = false): Promise<void> {
    if (!quiet) this.bus.emit({ type: 'config.changed', error, at: this.clock.now() });
    if (error || this.state === 'stopping' || this.state === 'stopped') return;
    this.queue.setLimit(config.maxConcurrentTurns);
    if (this.state === 'running') this.releases?.setEnabled(config.autoUpdate);
    this.deliveries.setPolicy(ledgerPolicy(config.delivery));
    const sessionSettings = JSON.stringify(config.sessions);
    if (sessionSettings !== this.sessionSettings) {
      this.sessionStore.close();
      this.sessionStore = this.openSessions(config);
      this.sessionSettings = sessionSettings;
    }
    if (this.agentFingerprint(config) !== this.agent.fingerprint) {
      const previous = this.agent.agent;
      this.agent = this.buildAgent(config);
      void previous.close().catch(() => undefined);
    }
    await this.platforms.apply(this.wantedPlatforms(config));
  }

  private openSessions(config: HomingConfig): SessionStore {
    const { sessions } = config;
    return openSessionStore({
      db: this.db,
      group: this.group,
      dataDir: this.options.dataDir,
      clock: this.clock,
      logger: this.options.logger,
      bus: this.bus,
      keys: {
        dmScope: sessions.dmScope,
        groupSessionsPerUser: sessions.groupSessionsPerUser,
        identityLinks: sessions.identityLinks,
      },
      policy: {
        freshnessWindowSeconds: sessions.freshnessWindowSeconds,
        reset: sessions.reset,
        resetByChatType: sessions.resetByChatType,
      },
      ...(this.options.installSecret ? { installSecret: this.options.installSecret } : {}),
    });
  }

  /**
   * Everything the agent is built from (the key as a hash): a config or secret
   * change that leaves it alone keeps the running agent, a new key replaces it.
   */
  private agentFingerprint(config: HomingConfig): string {
    const apiKey = this.secrets.get('agent.apiKey');
    return JSON.stringify([config.agent, apiKey === undefined ? null : digest(apiKey)]);
  }

  /** The agent for a conversation, with the settings the first matching routing rule gives it. */
  private answering(subject: RouteSubject | undefined, pseudonyms: Pseudonymiser): AnsweringAgent {
    const config = this.config.current;
    const route = subject ? matchRoute(config.routing, subject, pseudonyms) : undefined;
    const agent = config.agent;
    const model = route?.model ?? (agent.type === 'openai' ? agent.model : undefined);
    return {
      agent: this.agent.agent,
      timeoutMs: this.agent.timeoutMs,
      label: agentLabel(agent, route),
      model,
      systemPrompt: agent.type === 'openai' ? agent.systemPrompt : undefined,
      route,
      // An ACP agent says at its start whether it takes images; it is sent them and decides (agents/acp.ts).
      images: (agent.type === 'openai' && agent.images === true) || agent.type === 'acp',
    };
  }

  private buildAgent(config: HomingConfig): { agent: Agent; timeoutMs: number; fingerprint: string } {
    const apiKey = this.secrets.get('agent.apiKey');
    const fingerprint = this.agentFingerprint(config);
    const built = createAgent(config.agent, {
      ...(apiKey !== undefined ? { apiKey } : {}),
      env: this.env,
      version: this.options.version,
      processes: trackAgentProcesses({ db: this.db, logger: this.options.logger }),
      status: () => ({
        version: this.options.version,
        uptimeMs: this.getStatus().uptimeMs,
        platforms: this.platforms.list(),
        owed: this.deliveries.ledger.owedCount(),
      }),
    });
    if (built.ok) return { agent: built.agent, timeoutMs: turnTimeoutMs(config.agent), fingerprint };
    this.options.logger.error(`the agent cannot start: ${built.error}`);
    return { agent: unavailableAgent(built.error), timeoutMs: 10_000, fingerprint };
  }

  private wantedPlatforms(config: HomingConfig) {
    return platformWanted(config, {
      local: this.local,
      secrets: this.secrets,
      env: this.env,
      logger: this.options.logger,
      clock: this.clock,
      tuning: this.options.tuning ?? {},
      dataDir: this.options.dataDir,
      pairing: this.pairing,
      onRefused: (platform, sender) => this.bus.emit({ type: 'sender.refused', platform, sender, at: this.clock.now() }),
    });
  }

  private setState(state: GatewayState): void {
    this.state = state;
    this.bus.emit({ type: 'gateway.state', state, at: this.clock.now() });
  }

  private handlers(): ApiHandlers {
    return {
      getStatus: () => this.getStatus(),
      getOverview: () => this.getOverview(),
      setPaused: async ({ paused }) => {
        await this.setPaused(paused);
        return { paused: this.platforms.isPaused };
      },
      ...sessionApiHandlers(() => this.sessionStore, this.media),
      ...mediaApiHandlers(this.media),
      ...deliveryApiHandlers(() => this.deliveries),
      ...localChatApiHandlers({
        ready: this.ready,
        local: this.local,
        pipeline: this.pipeline,
        uploads: this.uploads,
        maxFileBytes: () => mediaLimits(this.config.current.media).maxFileBytes,
      }),
      ...platformApiHandlers({ platforms: this.platforms, secrets: this.secrets, env: this.env, savedConfig: () => this.config.current }),
      ...configApiHandlers({ config: this.config, view: () => this.configView(), clock: this.clock }),
      ...secretApiHandlers({ secrets: this.secrets, applied: () => this.refresh() }),
      ...scheduleApiHandlers({ schedules: () => this.schedules, zone: localTimeZone, ready: () => this.ready }),
      getLogTail: (params) => ({ lines: this.logTail.tail(params?.lines ?? 200) }),
      ...pairingApiHandlers(
        () => this.pairing,
        ({ platform, chatId }) => void this.platforms.get(platform)?.sendNotice?.(chatId, APPROVED_NOTICE),
      ),
    };
  }
}

/** The owner's instructions for the agent, in the data directory (optional). */
export const INSTRUCTIONS_FILE = 'instructions.md';

/** `openai · llama3.2`, `command · my-agent`, with the routing rule that chose the settings. */
export function agentLabel(agent: HomingConfig['agent'], route: Route | undefined): string {
  const model = route?.model ?? (agent.type === 'openai' ? agent.model : undefined);
  const base =
    agent.type === 'builtin'
      ? 'built-in agent'
      : agent.type === 'openai'
        ? `openai · ${model}`
        : `${agent.type} · ${programName(agent.command, agent.args)}${model ? ` (model ${model})` : ''}`;
  return route ? `${base}, rule "${route.name}"` : base;
}

/** `my-agent`, or `node agent.mjs` for a script run by an interpreter: names, never paths. */
function programName(command: string, args: readonly string[]): string {
  const script = args[0];
  return script && !script.startsWith('-') && /[/.]/.test(script) ? `${basename(command)} ${basename(script)}` : basename(command);
}

/** What an approved sender is told (outside the ledger: a courtesy, not a reply). */
const APPROVED_NOTICE = '✓ You can talk to the assistant now.';

/** Stands in for an agent whose settings cannot work (a named variable is unset): every turn says why. */
function unavailableAgent(error: string): Agent {
  return {
    kind: 'builtin',
    runTurn: async () => ({ ok: false, kind: 'unreachable', error }),
    close: async () => {},
  };
}

/**
 * Every API call first commits what the group holds, so a call reads what this
 * process has done (a counter or a delivered mark is otherwise committed at the
 * end of the event-loop turn).
 */
function committedFirst(handlers: ApiHandlers, group: CommitGroup): ApiHandlers {
  const wrapped: Record<string, (params: never) => unknown> = {};
  for (const [method, handler] of Object.entries(handlers) as [string, (params: never) => unknown][]) {
    wrapped[method] = (params) => {
      group.flush();
      return handler(params);
    };
  }
  return wrapped as unknown as ApiHandlers;
}
