import { newId } from '@calgate/core';
import type { ExposureLog, OnceLedger, RateLimiter } from '@calgate/locks';
import { type AuditLog, ConfirmationRepository, PeopleRepository } from '@calgate/store';
import { type Catalogue, type ProviderResolver, unsafeTextIn } from '@calgate/tools';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { KeyAuthenticator } from './auth.ts';
import type { BookingFactory } from './booking.ts';
import type { CalendarChanges } from './calendar-changes.ts';
import type { ClientCapabilityStore } from './client-capabilities.ts';
import type { DirectoryFactory } from './directory.ts';
import { type MirrorPushDeps, registerMirrorPush } from './google/push.ts';
import type { DashboardAccountDeps } from './http/api/deps.ts';
import { DashboardGuard, registerApi } from './http/api/index.ts';
import { registerBrowserErrorPages } from './http/browser-errors.ts';
import { type DashboardApiDeps, registerDashboardApi } from './http/dashboard-api.ts';
import { registerDashboardAudit } from './http/dashboard-audit.ts';
import type { ElicitationRelay } from './http/elicitation-relay.ts';
import { errorBody, handleError, handleNotFound } from './http/errors.ts';
import { registerEventPage } from './http/event-page.ts';
import { registerIconRoutes } from './http/icons.ts';
import { type McpRouteDeps, registerMcpRoutes, type SchedulerFactory } from './http/mcp.ts';
import { type ReadinessCheck, registerMetaRoutes } from './http/meta.ts';
import { type Metrics, registerMetricsRoute } from './http/metrics.ts';
import { type OAuthRouteDeps, registerOAuthRoutes } from './http/oauth.ts';
import { registerMicrosoftOAuthRoutes } from './http/oauth-microsoft.ts';
import { originPolicy, registerCors } from './http/origins.ts';
import { DEFAULT_DASHBOARD_DIR, registerDashboardStatic } from './http/static.ts';
import { fastifyTrustProxy, type TrustProxy } from './http/trust-proxy.ts';
import { keySettings } from './key-settings.ts';
import type { LogLevelStore } from './log-levels.ts';
import { requestLoggerFactory } from './logger.ts';
import { registerMicrosoftPush } from './microsoft/push.ts';
import type { ClientDocuments } from './oauth/client-documents.ts';
import { registerConsentRoutes } from './oauth/consent.ts';
import { OAUTH_PATHS } from './oauth/metadata.ts';
import { registerAuthorizationServer } from './oauth/server.ts';
import type { AccessTokens, AuthorizationRequests } from './oauth/tokens.ts';
import type { RulesFactory } from './rules.ts';

export interface AppDeps {
  publicUrl: string;
  /** OUTBOUND_ALLOW_PRIVATE: tools may fetch private and loopback addresses (import_events' url). */
  outboundAllowPrivate?: boolean;
  allowedOrigins: readonly string[];
  catalogue: Catalogue;
  authenticator: KeyAuthenticator;
  rateLimiter: RateLimiter;
  /** Each key's MCP log level; levels last only as long as the process when absent. */
  logLevels?: LogLevelStore;
  /** What each key's agent was shown that may carry instructions (read-side screening). */
  exposures?: ExposureLog;
  /** Whether each key's MCP client declared form elicitation; per process when absent. */
  clientCapabilities?: ClientCapabilityStore;
  /** Answers to elicitation forms, passed between gateway processes; per process when absent. */
  elicitations?: ElicitationRelay;
  /** Signs the state of 2026-07-28 input_required questions (derived from ENCRYPTION_KEY). */
  inputStateKey?: Uint8Array;
  /** Claims each input_required state's one use across gateways; this process only when absent. */
  inputStates?: OnceLedger;
  /** Calendars the mirror saw change, for subscriptions/listen resource updates; none when absent. */
  calendarChanges?: CalendarChanges;
  audit: AuditLog;
  providers: ProviderResolver;
  readiness: readonly ReadinessCheck[];
  logger: FastifyBaseLogger;
  version: string;
  /** Calendar creation for create_calendar. */
  directory?: DirectoryFactory;
  /** Locks and the ledger for book_slot. */
  booking?: BookingFactory;
  /** Projects, rules and classifications for the rules tools. */
  rules?: RulesFactory;
  /** Scheduled prompts and delivery targets for the scheduler tools. */
  scheduler?: SchedulerFactory;
  /** Keep-alive and re-check intervals of GET /api/mcp streams. */
  mcpStreams?: { keepAliveMs: number; recheckMs: number };
  /** Per-request work budget and per-key concurrency of /api/mcp. */
  mcpLimits?: McpRouteDeps['mcpLimits'];
  /** Per-key slots and CPU-bound turns across gateways (Redis); this process's own when absent. */
  keySlots?: McpRouteDeps['keySlots'];
  keyCpuTurns?: McpRouteDeps['keyCpuTurns'];
  /** The built dashboard's folder; defaults to apps/dashboard/dist. */
  dashboardDir?: string;
  /** Which proxies' X-Forwarded-For to believe for `request.ip` (TRUST_PROXY); none when absent. */
  trustProxy?: TrustProxy | undefined;
  /** Counters for GET /metrics, served when `metricsToken` is set. */
  metrics?: Metrics | undefined;
  metricsToken?: string | undefined;
  /** Google push notifications for mirrored calendars (POST /api/google/push); absent: not served. */
  mirrorPush?: MirrorPushDeps | undefined;
  /** Calgate's own OAuth authorization server for MCP clients (the same tokens the authenticator accepts). */
  oauthServer: {
    tokens: AccessTokens;
    requests: AuthorizationRequests;
    clients: Pick<ClientDocuments, 'resolve'>;
  };
  /** Dashboard REST and the Google and Microsoft connection flows. */
  dashboard: Omit<DashboardApiDeps, 'guard'> &
    Omit<OAuthRouteDeps, 'publicUrl' | 'google' | 'sessions'> &
    DashboardAccountDeps;
}

/** The gateway as a Fastify instance, from explicit dependencies; tests call this, main listens. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger,
    genReqId: () => newId('req'),
    childLoggerFactory: requestLoggerFactory,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    // One line per request would dominate the log at agent traffic rates; the audit log has calls.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    trustProxy: fastifyTrustProxy(deps.trustProxy),
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Text no database can store is refused before any route sees it (tool calls refuse it per
  // call instead, as a tool error naming the argument).
  app.addHook('preValidation', async (request, reply) => {
    if (request.url.split('?')[0] === '/api/mcp') {
      return;
    }
    const problem =
      unsafeTextIn(request.params, 'path') ??
      unsafeTextIn(request.query, 'query') ??
      unsafeTextIn(request.body);
    if (problem !== undefined) {
      return reply.status(400).send(errorBody('invalid_argument', problem, request.id));
    }
  });
  registerBrowserErrorPages(app, deps.dashboardDir ?? DEFAULT_DASHBOARD_DIR);
  // Before any route: dashboard actions go to the audit log beside tool calls.
  registerDashboardAudit(app, {
    audit: deps.audit,
    sessions: deps.dashboard.sessions,
    users: deps.dashboard.users,
  });
  // Browser-based MCP clients call /api/mcp and the OAuth endpoints from their own origins (see
  // origins.ts for which).
  registerCors(app, originPolicy(deps.publicUrl, deps.allowedOrigins), [
    '/api/mcp',
    OAUTH_PATHS.token,
    OAUTH_PATHS.register,
    OAUTH_PATHS.revoke,
    '/.well-known/*',
  ]);
  const mcpUrl = `${deps.publicUrl}/api/mcp`;
  registerMetaRoutes(app, deps);
  registerIconRoutes(app);
  if (deps.metrics !== undefined) {
    registerMetricsRoute(app, { metrics: deps.metrics, token: deps.metricsToken });
  }
  registerMcpRoutes(app, {
    ...deps,
    mcpUrl,
    confirmations: new ConfirmationRepository(deps.dashboard.db.prisma),
    keySettings: keySettings(deps.dashboard.keys, (tenantId) =>
      deps.authenticator.invalidate('here', tenantId),
    ),
  });
  if (deps.mirrorPush !== undefined) {
    registerMirrorPush(app, deps.mirrorPush);
    registerMicrosoftPush(app, deps.mirrorPush);
  }
  registerAuthorizationServer(app, {
    ...deps.oauthServer,
    publicUrl: deps.publicUrl,
    mcpUrl,
    db: deps.dashboard.db,
    oauth: deps.dashboard.oauth,
    rateLimiter: deps.rateLimiter,
    dashboardDir: deps.dashboardDir ?? DEFAULT_DASHBOARD_DIR,
    invalidateKeys: (tenantId) => deps.authenticator.invalidate('here', tenantId),
  });
  registerOAuthRoutes(app, {
    ...deps.dashboard,
    publicUrl: deps.publicUrl,
    dashboardDir: deps.dashboardDir,
  });
  registerMicrosoftOAuthRoutes(app, {
    ...deps.dashboard,
    publicUrl: deps.publicUrl,
    dashboardDir: deps.dashboardDir,
  });
  const guard = new DashboardGuard(
    deps.dashboard.sessions,
    deps.allowedOrigins,
    deps.dashboard.csrfKey,
    new PeopleRepository(deps.dashboard.db),
  );
  registerConsentRoutes(app, {
    ...deps.dashboard,
    guard,
    requests: deps.oauthServer.requests,
    publicUrl: deps.publicUrl,
    invalidateKeys: (tenantId) => deps.authenticator.invalidate('here', tenantId),
  });
  registerDashboardApi(app, { ...deps.dashboard, guard, publicUrl: deps.publicUrl });
  registerApi(app, {
    ...deps.dashboard,
    guard,
    publicUrl: deps.publicUrl,
    invalidateKeys: (tenantId) => deps.authenticator.invalidate('here', tenantId),
  });
  registerEventPage(app, { ...deps.dashboard, providers: deps.providers, dashboardDir: deps.dashboardDir });
  registerDashboardStatic(app, deps.dashboardDir, deps.publicUrl);
  return app;
}
