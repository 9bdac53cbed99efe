import { MemoryRateLimiter, RedisRateLimiter } from '@calgate/locks';
import { type HostResolver, Scheduling, startBoss } from '@calgate/scheduler';
import {
  ApiKeyRepository,
  BookingRepository,
  ConnectionRepository,
  type Database,
  MirrorChannelRepository,
  MirrorRepository,
  MirrorVersionListener,
  migrate,
  OAuthRepository,
  OAuthStateRepository,
  PostgresAuditLog,
  RulesRepository,
  SchedulerRepository,
  SessionRepository,
  TenancyRepository,
  TotpRepository,
  UserRepository,
} from '@calgate/store';
import { catalogue } from '@calgate/tools';
import type { Logger } from 'pino';
import type { AppDeps } from './app.ts';
import { TwoStepSignIn } from './auth/two-step.ts';
import { KeyAuthenticator } from './auth.ts';
import { bookingServices } from './booking.ts';
import { ConfirmedBookingsCache } from './booking-cache.ts';
import type { Config } from './config.ts';
import { calendarDirectory } from './directory.ts';
import { GoogleConnections } from './google/service.ts';
import { tenantSchedulerStatus } from './http/api/scheduler.ts';
import { Metrics, promptQueueDepth } from './http/metrics.ts';
import { installHttpClient } from './http-client.ts';
import { mailerFor } from './mail.ts';
import { MicrosoftConnections, microsoftSetup } from './microsoft/connect.ts';
import { mailboxLimits } from './microsoft/mailbox-limits.ts';
import type { MicrosoftProviders } from './microsoft/providers.ts';
import { ChannelTokens, MirrorChannels } from './mirror/channels.ts';
import { createMirrorQueue, MirrorJobs } from './mirror/jobs.ts';
import { connectionMirror } from './mirror/lifecycle.ts';
import { ClientDocuments } from './oauth/client-documents.ts';
import { AccessTokens, AuthorizationRequests } from './oauth/tokens.ts';
import { failClosed, OutageLog } from './outage-log.ts';
import { rulesServices } from './rules.ts';
import { startBackgroundWork } from './runtime/background.ts';
import { connectDatabase } from './runtime/database.ts';
import { calendarProviders } from './runtime/providers.ts';
import { loadSecretBox } from './runtime/secret-box.ts';
import { sharedState } from './runtime/shared-state.ts';
import { schedulerServices } from './scheduler.ts';
import { SessionManager } from './session.ts';
import { VERSION } from './version.ts';

export { startBackgroundWork } from './runtime/background.ts';
export { connectDatabase, type DatabaseHandle } from './runtime/database.ts';
export { calendarProviders, googleSetup } from './runtime/providers.ts';
export { loadSecretBox } from './runtime/secret-box.ts';

/** Sign-in attempts per email and client address: five at once, then one every 12 s. */
const SIGN_IN_POLICY = { perMinute: 5, burst: 5 };

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

export interface RuntimeOptions {
  /** Run the background worker in this process (default: WORKER_IN_PROCESS, else no). */
  worker?: boolean | undefined;
  /** How a CalDAV server's host name is resolved when an account is connected; absent, the system's. */
  resolveHost?: HostResolver | undefined;
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
      down: 'Redis is unreachable: rate limits are not enforced, per-key concurrency is limited per gateway and Outlook mailboxes\' Graph limits per process, bookings and sign-in answer "unavailable"',
      up: 'Redis is reachable again',
    });
    const postgresOutage = new OutageLog(log, {
      dependency: 'postgres',
      down: 'Postgres is unreachable: calls that need it answer "unavailable"; audit rows are kept until it answers',
      up: 'Postgres is reachable again',
    });

    const shared = await sharedState(config, redisOutage);
    if (shared.close !== undefined) {
      closers.unshift(shared.close);
    }
    const {
      redis,
      rateLimiter,
      logLevels,
      slotLock,
      exposures,
      inputStates,
      clientCapabilities,
      keySlots,
      keyCpuTurns,
      elicitations,
      calendarChanges,
      publishChanges,
      keyChanges,
    } = shared;

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
    authenticator.onInvalidate((from, tenantId) => {
      if (from === 'here') {
        keyChanges.publish(tenantId);
      }
    });
    keyChanges.received = (tenantId) => authenticator.invalidate('peer', tenantId);

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
    const { googleProviders, microsoftProviders, caldav, providers, sources } = await calendarProviders(
      config,
      db,
      connections,
      log,
      (tenantId) => authenticator.invalidate('here', tenantId),
      mirrorJobs,
      versions,
      // Outlook mailboxes' Graph limits, shared with the other gateways and the workers.
      mailboxLimits(redis, redisOutage),
    );
    const oauth = new OAuthRepository(db, {
      allowHttpClientDocuments: config.oauth.allowPrivateClients,
    });
    const rulesRepository = new RulesRepository(db);
    const schedulerRepository = new SchedulerRepository(db, box);
    const channelTokens = new ChannelTokens(box);
    // Connecting queues the calendars' first syncs; disconnecting stops pushes, drops the mirror.
    const accountMirror = connectionMirror({
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
    });
    const google = new GoogleConnections(
      googleProviders,
      connections,
      tenancy,
      log,
      (tenantId) => authenticator.invalidate('here', tenantId),
      keys,
      accountMirror,
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
      inputStates,
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
        invalidate: (tenantId) => authenticator.invalidate('here', tenantId),
      }),
      booking: bookingServices({
        repository: new BookingRepository(db),
        lock: slotLock,
        lockTtlMs: config.lockTtlMs,
        cache: versions === undefined ? undefined : new ConfirmedBookingsCache(versions),
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
          (tenantId) => authenticator.invalidate('here', tenantId),
          keys,
          accountMirror,
        ),
        googleProviders,
        forgetCaldav: (connectionId) => caldav.forget(connectionId),
        resolveHost: options.resolveHost,
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
