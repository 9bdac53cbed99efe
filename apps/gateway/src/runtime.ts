import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  connectRedis,
  type ExposureLog,
  type KeyTurns,
  MemoryExposureLog,
  MemoryRateLimiter,
  MemorySlotLock,
  type RateLimiter,
  RedisExposureLog,
  RedisKeyTurns,
  RedisRateLimiter,
  RedisSlotLock,
  redisReady,
  type SlotLock,
} from '@calgate/locks';
import {
  type CalendarProvider,
  DEFAULT_GOOGLE_ENDPOINTS,
  LocalCalendarProvider,
  MirroredCalendarProvider,
  type MirrorVersionWatch,
  type ServiceAccountKey,
} from '@calgate/providers';
import { Scheduling, startBoss } from '@calgate/scheduler';
import {
  ApiKeyRepository,
  BookingRepository,
  ConnectionRepository,
  type Database,
  LocalEventStore,
  MirrorChannelRepository,
  MirrorRepository,
  MirrorVersionListener,
  migrate,
  OAuthRepository,
  OAuthStateRepository,
  openDatabase,
  PostgresAuditLog,
  RulesRepository,
  SchedulerRepository,
  SecretBox,
  SessionRepository,
  TenancyRepository,
  TotpRepository,
  UserRepository,
} from '@calgate/store';
import { catalogue, type ProviderResolver } from '@calgate/tools';
import { startWorker, type Worker } from '@calgate/worker';
import type { Redis } from 'ioredis';
import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { AppDeps } from './app.ts';
import { TwoStepSignIn } from './auth/two-step.ts';
import { KeyAuthenticator } from './auth.ts';
import { bookingServices } from './booking.ts';
import { CaldavAccounts } from './caldav/accounts.ts';
import {
  type ClientCapabilityStore,
  failSafeCapabilities,
  MemoryClientCapabilityStore,
  RedisClientCapabilityStore,
} from './client-capabilities.ts';
import { type Config, ConfigError } from './config.ts';
import { calendarDirectory } from './directory.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded/postgres.ts';
import { GoogleProviders, type GoogleSetup } from './google/providers.ts';
import { GoogleConnections } from './google/service.ts';
import { googleSyncSources } from './google/sync-sources.ts';
import { tenantSchedulerStatus } from './http/api/scheduler.ts';
import { ElicitationRelay } from './http/elicitation-relay.ts';
import { KeySlots } from './http/key-slots.ts';
import { Metrics, promptQueueDepth } from './http/metrics.ts';
import { IcsSubscriptions } from './ics/subscriptions.ts';
import {
  failOpenLogLevels,
  type LogLevelStore,
  MemoryLogLevelStore,
  RedisLogLevelStore,
} from './log-levels.ts';
import { mailerFor } from './mail.ts';
import { MicrosoftConnections, microsoftSetup } from './microsoft/connect.ts';
import { MicrosoftProviders } from './microsoft/providers.ts';
import { ChannelTokens, MirrorChannels } from './mirror/channels.ts';
import { createMirrorQueue, MirrorJobs } from './mirror/jobs.ts';
import { connectionMirror } from './mirror/lifecycle.ts';
import { mirrorReadDeps } from './mirror/reads.ts';
import { SyncSources } from './mirror/sources.ts';
import { type MirrorWorkDeps, startMirrorWork } from './mirror/worker.ts';
import { ClientDocuments } from './oauth/client-documents.ts';
import { AccessTokens, AuthorizationRequests } from './oauth/tokens.ts';
import {
  failClosed,
  failOpen,
  failOpenExposures,
  failToLocal,
  OutageLog,
  watchedSlotLock,
} from './outage-log.ts';

/** Where gateway processes pass clients' answers to elicitation forms. */
const ELICITATION_CHANNEL = 'calgate:elicitations';
/** Told whenever a gateway drops its key cache (grants changed, a key revoked). */
const KEY_CHANGES_CHANNEL = 'calgate:key-changes';

import {
  CALENDAR_CHANGES_CHANNEL,
  type CalendarChangePublisher,
  CalendarChanges,
  calendarChangeFeed,
  encodeCalendarChanges,
} from './calendar-changes.ts';
import { installHttpClient } from './http-client.ts';
import { startFeedConsumer } from './mirror/feed.ts';
import { rulesServices } from './rules.ts';
import { schedulerServices } from './scheduler.ts';
import { eventCheck, startEventPlanning } from './scheduler-events.ts';
import { SessionManager } from './session.ts';
import { VERSION } from './version.ts';

/** Sign-in attempts per email and client address: five at once, then one every 12 s. */
const SIGN_IN_POLICY = { perMinute: 5, burst: 5 };

/** Written by a running embedded gateway so CLI commands can reach its database meanwhile. */
interface RuntimeFile {
  pid: number;
  databaseUrl: string;
}

function runtimeFile(dataDir: string): string {
  return join(resolve(dataDir), 'runtime.json');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface DatabaseHandle {
  db: Database;
  /** Where the database is, for clients that open their own pool (pg-boss). */
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * The configured database, or the embedded one under DATA_DIR: reused when a running gateway
 * already serves it, started (and later stopped) here otherwise.
 */
export async function connectDatabase(
  config: Config,
  log: Logger,
  options: { publish?: boolean; poolSize?: number } = {},
): Promise<DatabaseHandle> {
  if (config.databaseUrl !== undefined) {
    const db = openDatabase({
      url: config.databaseUrl,
      ...(options.poolSize === undefined ? {} : { max: options.poolSize }),
    });
    return { db, url: config.databaseUrl, embedded: false, close: () => db.close() };
  }
  const file = runtimeFile(config.dataDir);
  const running = await readFile(file, 'utf8')
    .then((text) => JSON.parse(text) as RuntimeFile)
    .catch(() => undefined);
  if (running !== undefined && running.pid !== process.pid && isAlive(running.pid)) {
    const db = openDatabase({ url: running.databaseUrl, max: 2 });
    return { db, url: running.databaseUrl, embedded: true, close: () => db.close() };
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const postgres: EmbeddedPostgres = await startEmbeddedPostgres({
    dataDir: config.dataDir,
    log,
    handleSignals: false,
  });
  const db = openDatabase({ url: postgres.url });
  if (options.publish) {
    const content: RuntimeFile = { pid: process.pid, databaseUrl: postgres.url };
    await writeFile(file, JSON.stringify(content), { mode: 0o600 });
  }
  return {
    db,
    url: postgres.url,
    embedded: true,
    async close() {
      await db.close();
      if (options.publish) {
        await rm(file, { force: true });
      }
      await postgres.stop();
    },
  };
}

/**
 * The master keys for stored secrets: ENCRYPTION_KEY (then ENCRYPTION_KEYS_PREVIOUS), or for the
 * embedded setup a key generated once into DATA_DIR with mode 0600.
 */
export async function loadSecretBox(config: Config, embedded: boolean): Promise<SecretBox> {
  if (config.encryptionKey !== undefined) {
    return new SecretBox([config.encryptionKey, ...config.previousEncryptionKeys]);
  }
  if (!embedded) {
    throw new ConfigError(
      'ENCRYPTION_KEY is required with DATABASE_URL (generate one: openssl rand -base64 32).',
    );
  }
  const file = join(resolve(config.dataDir), 'encryption-key');
  let encoded = await readFile(file, 'utf8').catch(() => undefined);
  if (encoded === undefined) {
    encoded = randomBytes(32).toString('base64');
    await writeFile(file, `${encoded}\n`, { mode: 0o600, flag: 'wx' }).catch(async () => {
      encoded = await readFile(file, 'utf8');
    });
  }
  await chmod(file, 0o600);
  return new SecretBox([
    new Uint8Array(Buffer.from(encoded.trim(), 'base64')),
    ...config.previousEncryptionKeys,
  ]);
}

/** Google's client, service account and endpoints from configuration. */
export async function googleSetup(config: Config): Promise<GoogleSetup> {
  const endpoints = {
    apiRootUrl: config.google.apiRootUrl ?? DEFAULT_GOOGLE_ENDPOINTS.apiRootUrl,
    oauthUrl: config.google.oauthUrl ?? DEFAULT_GOOGLE_ENDPOINTS.oauthUrl,
  };
  const { clientId, clientSecret, serviceAccountKeyFile } = config.google;
  const client =
    clientId !== undefined && clientSecret !== undefined
      ? { clientId, clientSecret, redirectUri: `${config.publicUrl}/oauth/google/callback`, endpoints }
      : undefined;
  let serviceAccount: ServiceAccountKey | undefined;
  if (serviceAccountKeyFile !== undefined) {
    const key = JSON.parse(await readFile(serviceAccountKeyFile, 'utf8')) as Partial<ServiceAccountKey>;
    if (typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
      throw new ConfigError(
        `GOOGLE_SERVICE_ACCOUNT_KEY_FILE ${serviceAccountKeyFile} is not a service-account key (client_email, private_key).`,
      );
    }
    serviceAccount = {
      client_email: key.client_email,
      private_key: key.private_key,
      ...(key.private_key_id ? { private_key_id: key.private_key_id } : {}),
    };
  }
  return { client, serviceAccount, endpoints };
}

export interface Runtime {
  deps: AppDeps;
  db: Database;
  tenancy: TenancyRepository;
  keys: ApiKeyRepository;
  connections: ConnectionRepository;
  google: GoogleConnections;
  /** Outlook connections' providers (one per connection). */
  microsoftProviders: MicrosoftProviders;
  /** Delivery targets, schedules and deliveries. */
  scheduler: SchedulerRepository;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * The calendars' providers: Calgate's own store, and Google per connection (through its mirror),
 * with the mirror's sync sources (one per provider it keeps).
 */
export async function calendarProviders(
  config: Config,
  db: Database,
  connections: ConnectionRepository,
  log: Logger,
  invalidate: () => void,
  /** Given, Google calendars are read from their mirrors (MIRROR_READS) and first syncs queued here. */
  mirrorJobs?: MirrorJobs,
  /** Announcements of changed mirror state this process hears (free/busy then skips re-reading sync states). */
  versions?: MirrorVersionWatch,
): Promise<{
  googleProviders: GoogleProviders;
  microsoftProviders: MicrosoftProviders;
  providers: ProviderResolver;
  sources: SyncSources;
}> {
  const local = new LocalCalendarProvider(new LocalEventStore(db));
  const googleProviders = new GoogleProviders(await googleSetup(config), connections, log, invalidate);
  const microsoftProviders = new MicrosoftProviders(
    microsoftSetup(config),
    connections,
    log,
    invalidate,
    new TenancyRepository(db.prisma),
  );
  const caldav = new CaldavAccounts(connections, config.scheduler.allowPrivateTargets, log, invalidate);
  const feeds = new IcsSubscriptions(
    connections,
    config.scheduler.allowPrivateTargets,
    config.mirror.icsRefreshMs,
  );
  // Each connection's upstream by its provider: Outlook calendars through Graph, CalDAV servers,
  // subscribed feeds, else Google.
  const google: ProviderResolver = (calendar, tenantId) =>
    calendar.provider === 'microsoft'
      ? microsoftProviders.forConnection(tenantId, calendar.connectionId, calendar.accountEmail)
      : calendar.provider === 'caldav'
        ? caldav.forConnection(tenantId, calendar.connectionId, calendar.accountEmail)
        : calendar.provider === 'ics'
          ? feeds.forConnection(tenantId, calendar.connectionId)
          : googleProviders.forConnection(
              tenantId,
              calendar.connectionId,
              calendar.auth,
              calendar.accountEmail,
            );
  const sources = new SyncSources([
    microsoftProviders.syncSources({ pageSize: config.mirror.pageSize }),
    googleSyncSources(
      googleProviders.setup,
      connections,
      (connectionId, reason) => {
        log.warn({ connectionId, reason }, 'Google account needs to be reconnected');
        googleProviders.forget(connectionId);
      },
      { pageSize: config.mirror.pageSize },
    ),
    caldav.syncSources(db),
    feeds.syncSources(db),
  ]);
  if (mirrorJobs === undefined || !config.mirror.reads) {
    return {
      googleProviders,
      microsoftProviders,
      providers: (calendar, tenantId) => (calendar.provider === 'local' ? local : google(calendar, tenantId)),
      sources,
    };
  }
  const mirror = new MirrorRepository(db);
  const reads = new Map(
    sources.providers.map((provider) => [
      provider,
      mirrorReadDeps({
        db,
        mirror,
        sources,
        provider,
        jobs: mirrorJobs,
        log,
        maxStalenessMs: config.mirror.maxStalenessMs,
        versions,
      }),
    ]),
  );
  // One wrapper per upstream provider (which is cached per connection).
  const mirrored = new WeakMap<CalendarProvider, MirroredCalendarProvider>();
  const providers: ProviderResolver = (calendar, tenantId) => {
    if (calendar.provider === 'local') {
      return local;
    }
    const upstream = google(calendar, tenantId);
    const format = sources.get(calendar.provider)?.format;
    const deps = reads.get(calendar.provider);
    if (calendar.auth === 'none' || format === undefined || deps === undefined) {
      return upstream;
    }
    let provider = mirrored.get(upstream);
    if (provider === undefined) {
      provider = new MirroredCalendarProvider(
        upstream,
        format,
        { tenantId, connectionId: calendar.connectionId, auth: calendar.auth },
        deps,
      );
      mirrored.set(upstream, provider);
    }
    return provider;
  };
  return { googleProviders, microsoftProviders, providers, sources };
}

/**
 * The background work of a worker process (or of the gateway in `calgate start`): audit
 * retention, prompt delivery and the re-planning of event-relative prompts.
 */
export async function startBackgroundWork(input: {
  config: Config;
  db: Database;
  log: Logger;
  boss: PgBoss;
  repository: SchedulerRepository;
  providers: ProviderResolver;
  health?: { host: string; port: number };
  /** Keeps calendars' mirrors in sync (pg-boss jobs and their planner) when given. */
  mirror?: Omit<MirrorWorkDeps, 'db' | 'log'>;
  /** Where calendars the mirror saw change are published for listen streams; nowhere when absent. */
  calendarChanges?: CalendarChangePublisher | undefined;
}): Promise<Worker> {
  const { config, db, log, boss, repository, providers } = input;
  const stopSync =
    input.mirror === undefined ? async () => {} : await startMirrorWork(boss, { ...input.mirror, db, log });
  const changes =
    input.calendarChanges === undefined
      ? undefined
      : await startFeedConsumer(calendarChangeFeed(input.calendarChanges), { db, log }).catch(
          async (error: unknown) => {
            await stopSync();
            throw error;
          },
        );
  const stopMirror = async () => {
    await changes?.stop();
    await stopSync();
  };
  const stopPlanning = await startEventPlanning(boss, {
    db,
    repository,
    scheduling: new Scheduling(boss, repository),
    providers,
    log,
  }).catch(async (error: unknown) => {
    await stopMirror();
    throw error;
  });
  try {
    const worker = await startWorker({
      db,
      log,
      auditRetentionDays: config.auditRetentionDays,
      ...(input.health === undefined ? {} : { health: input.health }),
      delivery: {
        boss,
        repository,
        allowPrivate: config.scheduler.allowPrivateTargets,
        graceMs: config.scheduler.misfireGraceMs,
        concurrency: config.scheduler.concurrency,
        eventCheck: eventCheck({ db, repository, providers }),
      },
    });
    return {
      ...worker,
      async stop() {
        await stopMirror();
        await stopPlanning();
        await worker.stop();
      },
    };
  } catch (error) {
    await stopMirror();
    await stopPlanning();
    throw error;
  }
}

export interface RuntimeOptions {
  /** Run the background worker in this process (default: WORKER_IN_PROCESS, else no). */
  worker?: boolean | undefined;
}

/** Wires every dependency of the gateway once, from validated configuration. */
export async function createRuntime(
  config: Config,
  log: Logger,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  installHttpClient();
  const database = await connectDatabase(config, log, { publish: true });
  const closers: (() => Promise<void>)[] = [() => database.close()];
  try {
    const { db } = database;
    if (config.migrateOnStart) {
      const report = await migrate(db.pool);
      if (report.applied.length > 0) {
        log.info({ applied: report.applied }, 'database migrated');
      }
    }
    const box = await loadSecretBox(config, database.embedded);
    const keys = new ApiKeyRepository(db.prisma);
    const tenancy = new TenancyRepository(db.prisma);
    const connections = new ConnectionRepository(db.prisma, box);

    // One warning when Redis or Postgres stops answering and one line when it answers again.
    const redisOutage = new OutageLog(log, {
      dependency: 'redis',
      down: 'Redis is unreachable: rate limits are not enforced, per-key concurrency is limited per gateway, bookings and sign-in answer "unavailable"',
      up: 'Redis is reachable again',
    });
    const postgresOutage = new OutageLog(log, {
      dependency: 'postgres',
      down: 'Postgres is unreachable: calls that need it answer "unavailable"; audit rows are kept until it answers',
      up: 'Postgres is reachable again',
    });

    let redis: Redis | undefined;
    let rateLimiter: RateLimiter = new MemoryRateLimiter(config.rateLimit);
    let logLevels: LogLevelStore = new MemoryLogLevelStore();
    // Without Redis, leases are exact only within this one process.
    let slotLock: SlotLock = new MemorySlotLock();
    // What each key's agent was shown that may carry instructions, across gateways with Redis.
    let exposures: ExposureLog = new MemoryExposureLog();
    let clientCapabilities: ClientCapabilityStore = new MemoryClientCapabilityStore();
    // Per-key concurrency and CPU pacing across gateways; without Redis, each process's own.
    let keySlots: KeyTurns | undefined;
    let keyCpuTurns: KeyTurns | undefined;
    let elicitations = new ElicitationRelay();
    // Calendars the mirror saw change, from whichever worker saw them, for listen streams.
    const calendarChanges = new CalendarChanges();
    let publishChanges: CalendarChangePublisher = async (changes) => calendarChanges.emit(changes);
    // Key changes made on any gateway reach every other at once: each drops its key cache.
    const keyChanges = { publish: () => {}, received: () => {} };
    const runtimeId = randomBytes(8).toString('hex');
    if (config.redisUrl !== undefined) {
      const client = connectRedis(config.redisUrl, { name: 'calgate-gateway' });
      // Start with a connected client when Redis is up; when it is not, start anyway: /readyz
      // reports it, rate limits fail open and bookings fail closed until it answers.
      await redisReady(client, 5_000).catch((error: unknown) => redisOutage.failed(error));
      client.on('ready', () => redisOutage.succeeded());
      redis = client;
      rateLimiter = failOpen(new RedisRateLimiter(client, config.rateLimit), redisOutage);
      logLevels = failOpenLogLevels(new RedisLogLevelStore(client), redisOutage);
      slotLock = watchedSlotLock(new RedisSlotLock(client), redisOutage);
      exposures = failOpenExposures(new RedisExposureLog(client), redisOutage);
      clientCapabilities = failSafeCapabilities(new RedisClientCapabilityStore(client), redisOutage);
      const { concurrentPerKey, queuedPerKey } = config.mcpLimits;
      keySlots = failToLocal(
        new RedisKeyTurns(client, {
          limit: concurrentPerKey,
          queued: queuedPerKey,
          describe: (running, waiting) =>
            `This API key already has ${running} calls running and ${waiting} waiting (MCP_MAX_CONCURRENT_PER_KEY ${concurrentPerKey}, MCP_MAX_QUEUED_PER_KEY ${queuedPerKey}); nothing was done. Wait for answers before sending more.`,
        }),
        new KeySlots(config.mcpLimits),
        redisOutage,
      );
      // A key's CPU-bound calls one at a time across gateways, paced; the process's own turns
      // (in the MCP route) still apply, and alone while Redis is away.
      keyCpuTurns = failToLocal(
        new RedisKeyTurns(
          client,
          {
            limit: 1,
            queued: concurrentPerKey + queuedPerKey,
            pace: { maxPauseMs: 250 },
            describe: (running, waiting) =>
              `This API key already has ${running} CPU-bound call running and ${waiting} waiting across the gateways; nothing was done. Wait for answers before sending more.`,
          },
          'calgate:cputurns:',
        ),
        { acquire: async () => () => {} },
        redisOutage,
      );
      // A form's answer may reach another gateway process than the call waiting for it.
      const subscriber = client.duplicate({ connectionName: 'calgate-elicitations', autoResubscribe: false });
      subscriber.on('error', () => {});
      elicitations = new ElicitationRelay({
        publish: (payload) => {
          client.publish(ELICITATION_CHANNEL, payload).catch(() => {});
        },
      });
      const relay = elicitations;
      subscriber.on('message', (channel: string, payload: string) => {
        if (channel === CALENDAR_CHANGES_CHANNEL) {
          calendarChanges.receive(payload);
        } else if (channel === KEY_CHANGES_CHANNEL) {
          // This runtime's own message comes back too; it has dropped its cache already.
          if (payload !== runtimeId) {
            keyChanges.received();
          }
        } else {
          relay.receive(payload);
        }
      });
      // On every (re)connection: a gateway starts while Redis is away and subscribes once it answers.
      subscriber.on('ready', () => {
        subscriber
          .subscribe(ELICITATION_CHANNEL, CALENDAR_CHANGES_CHANNEL, KEY_CHANGES_CHANNEL)
          .catch(() => {});
      });
      // A worker in this process publishes as any other does, so every gateway hears it.
      keyChanges.publish = () => {
        client.publish(KEY_CHANGES_CHANNEL, runtimeId).catch(() => {});
      };
      publishChanges = async (changes) => {
        await client.publish(CALENDAR_CHANGES_CHANNEL, encodeCalendarChanges(changes));
      };
      closers.unshift(async () => {
        subscriber.disconnect();
        client.disconnect();
      });
    }

    const audit = new PostgresAuditLog(db, {
      bufferRows: config.audit.bufferRows,
      spoolDir: config.audit.spoolDir,
      health: postgresOutage,
      onError: (error, dropped) => log.error({ err: error, dropped }, 'audit entries could not be written'),
      onSpool: (event) =>
        event.kind === 'spilling'
          ? log.warn({ dir: event.dir }, 'audit rows are spooled to disk until Postgres takes them')
          : log.info(
              { rows: event.rows, segments: event.segments, dir: event.dir },
              'spooled audit rows written to Postgres',
            ),
    });
    const mcpUrl = `${config.publicUrl}/api/mcp`;
    const tokens = new AccessTokens({
      key: box.deriveKey('oauth-access-token'),
      issuer: config.publicUrl,
      audience: mcpUrl,
      ttlSeconds: config.oauth.accessTokenTtlSeconds,
    });
    const authenticator = new KeyAuthenticator({
      db,
      keys,
      tokens,
      ttlMs: config.keyCacheTtlMs,
      health: postgresOutage,
    });
    closers.unshift(
      () => audit.close(),
      () => authenticator.close(),
    );
    // A grant changed or a key revoked here is told to the other gateways; theirs are heard here.
    authenticator.onInvalidate((from) => {
      if (from === 'here') {
        keyChanges.publish();
      }
    });
    keyChanges.received = () => authenticator.invalidate('peer');

    const runsWorker = options.worker ?? config.workerInProcess ?? false;
    const boss = await startBoss({ databaseUrl: database.url, role: runsWorker ? 'worker' : 'producer' });
    boss.on('error', (error: unknown) => log.warn({ err: error }, 'job queue error (retried)'));
    closers.unshift(() => boss.stop({ graceful: true, timeout: 5_000 }));
    // Gateways enqueue mirror syncs (pushes, stale reads) before any worker may have started.
    await createMirrorQueue(boss);
    const mirrorJobs = new MirrorJobs(boss);
    let versions: MirrorVersionListener | undefined;
    if (config.mirror.reads) {
      const listener = new MirrorVersionListener(db, {
        onError: (error) => log.warn({ err: error }, 'mirror change announcements not heard (reconnecting)'),
      });
      versions = listener;
      closers.unshift(() => listener.close());
      // Nothing waits for it: until it listens, free/busy reads the sync state every time.
      void listener.start();
    }
    const { googleProviders, microsoftProviders, providers, sources } = await calendarProviders(
      config,
      db,
      connections,
      log,
      () => authenticator.invalidate(),
      mirrorJobs,
      versions,
    );
    const oauth = new OAuthRepository(db, {
      allowHttpClientDocuments: config.oauth.allowPrivateClients,
    });
    const rulesRepository = new RulesRepository(db);
    const schedulerRepository = new SchedulerRepository(db, box);
    const channelTokens = new ChannelTokens(box);
    const google = new GoogleConnections(
      googleProviders,
      connections,
      tenancy,
      log,
      () => authenticator.invalidate(),
      keys,
      // Connecting queues the calendars' first syncs; disconnecting stops pushes, drops the mirror.
      connectionMirror({
        jobs: mirrorJobs,
        mirror: new MirrorRepository(db),
        store: new MirrorChannelRepository(db),
        channels: new MirrorChannels({
          publicUrl: config.publicUrl,
          store: new MirrorChannelRepository(db),
          tokens: channelTokens,
          sources,
        }),
        log,
      }),
    );
    if (runsWorker) {
      const worker = await startBackgroundWork({
        config,
        db,
        log,
        boss,
        repository: schedulerRepository,
        providers,
        mirror: {
          sources,
          settings: config.mirror,
          push: { publicUrl: config.publicUrl, setting: config.mirrorPush, tokens: channelTokens },
        },
        calendarChanges: publishChanges,
      });
      closers.unshift(() => worker.stop());
    }

    const deps: AppDeps = {
      publicUrl: config.publicUrl,
      outboundAllowPrivate: config.scheduler.allowPrivateTargets,
      allowedOrigins: config.allowedOrigins,
      catalogue: catalogue(),
      authenticator,
      rateLimiter,
      logLevels,
      exposures,
      clientCapabilities,
      elicitations,
      calendarChanges,
      inputStateKey: box.deriveKey('mcp-input-state'),
      audit,
      providers,
      mcpStreams: config.mcpStreams,
      mcpLimits: config.mcpLimits,
      keySlots,
      keyCpuTurns,
      directory: calendarDirectory({
        tenancy,
        google: googleProviders,
        microsoft: microsoftProviders,
        invalidate: () => authenticator.invalidate(),
      }),
      booking: bookingServices({
        repository: new BookingRepository(db),
        lock: slotLock,
        lockTtlMs: config.lockTtlMs,
      }),
      rules: rulesServices(rulesRepository),
      scheduler: schedulerServices({
        db,
        repository: schedulerRepository,
        boss,
        providers,
        allowPrivate: config.scheduler.allowPrivateTargets,
      }),
      logger: log,
      version: VERSION,
      trustProxy: config.trustProxy,
      metrics: new Metrics({ version: VERSION, queueDepth: promptQueueDepth(db) }),
      metricsToken: config.metricsToken,
      // Google's push notifications for mirrored calendars: a change queues the calendar's sync.
      // Channels are opened only where Google can reach PUBLIC_URL; polling is the fallback.
      mirrorPush: {
        channels: new MirrorChannelRepository(db),
        tokens: channelTokens,
        onChange: async (tenantId, calendarId) => {
          await mirrorJobs.enqueue(tenantId, calendarId, 'push');
        },
      },
      oauthServer: {
        tokens,
        requests: new AuthorizationRequests({
          key: box.deriveKey('oauth-request'),
          issuer: config.publicUrl,
        }),
        clients: new ClientDocuments({ repository: oauth, allowPrivate: config.oauth.allowPrivateClients }),
      },
      dashboard: {
        sessions: new SessionManager(new SessionRepository(db), {
          secure: config.publicUrl.startsWith('https:'),
        }),
        google,
        microsoft: new MicrosoftConnections(
          microsoftSetup(config),
          connections,
          tenancy,
          log,
          () => authenticator.invalidate(),
          keys,
        ),
        googleProviders,
        connections,
        tenancy,
        states: new OAuthStateRepository(db),
        stateKey: box.deriveKey('oauth-state'),
        csrfKey: box.deriveKey('csrf'),
        twoStep: new TwoStepSignIn(new TotpRepository(db, box), box.deriveKey('totp-challenge')),
        db,
        users: new UserRepository(db.prisma),
        mailer: mailerFor(config.smtp),
        keys,
        oauth,
        rulesRepository,
        providers,
        schedulerRepository,
        scheduling: new Scheduling(boss, schedulerRepository),
        schedulerStatus: (tenantId) => tenantSchedulerStatus({ db, boss }, tenantId),
        allowPrivateTargets: config.scheduler.allowPrivateTargets,
        signInLimiter:
          redis === undefined
            ? new MemoryRateLimiter(SIGN_IN_POLICY)
            : failClosed(
                new RedisRateLimiter(redis, SIGN_IN_POLICY, 'calgate:signin:'),
                redisOutage,
                'Sign-in is briefly unavailable (its rate limiter does not answer); try again in a few seconds.',
              ),
      },
      readiness: [
        {
          name: 'postgres',
          check: async () => {
            await db.pool.query('SELECT 1');
          },
        },
        ...(redis === undefined
          ? []
          : [
              {
                name: 'redis',
                check: async () => {
                  await redis.ping();
                },
              },
            ]),
      ],
    };
    return {
      deps,
      db,
      tenancy,
      keys,
      connections,
      google,
      microsoftProviders,
      scheduler: schedulerRepository,
      embedded: database.embedded,
      async close() {
        for (const close of closers) {
          await close().catch((error: unknown) => log.error({ err: error }, 'shutdown step failed'));
        }
      },
    };
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
}
