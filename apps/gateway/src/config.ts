import { join } from 'node:path';
import {
  type AddressClass,
  classifyAddress,
  describeAddressClass,
  PRIVATE_ADDRESS_CLASSES,
  parseInterval,
} from '@calgate/scheduler';
import { z } from 'zod';
import { parseTrustProxy } from './http/trust-proxy.ts';

const list = z.string().transform((value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== ''),
);

const base64Key = z
  .string()
  .trim()
  .refine((value) => Buffer.from(value, 'base64').length === 32, {
    message: 'must be 32 bytes encoded as base64 (openssl rand -base64 32)',
  })
  .transform((value) => new Uint8Array(Buffer.from(value, 'base64')));

const flag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** Every setting; each needs a line in config-reference.ts (docs/settings.md and .env.example are built from it). */
export const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./.calgate'),
  /** How long a booking's range lease lasts if its holder stalls (fractions allowed, for tests). */
  LOCK_TTL_SECS: z.coerce.number().positive().max(3600).default(30),
  ENCRYPTION_KEY: base64Key.optional(),
  ENCRYPTION_KEYS_PREVIOUS: list.pipe(z.array(base64Key)).default([]),
  GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  GOOGLE_API_ROOT_URL: z.url().optional(),
  GOOGLE_OAUTH_URL: z.url().optional(),
  GOOGLE_SERVICE_ACCOUNT_KEY_FILE: z.string().min(1).optional(),
  MICROSOFT_CLIENT_ID: z.string().min(1).optional(),
  MICROSOFT_CLIENT_SECRET: z.string().min(1).optional(),
  /** The Entra tenant in the login URL: `common`, `organizations`, `consumers`, a domain or a tenant GUID. */
  MICROSOFT_TENANT: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9.-]*$/, 'must be common, organizations, consumers, a domain or a tenant id')
    .default('common'),
  /** Graph's versioned root; paths are appended to it, so it keeps its `/v1.0`. */
  MICROSOFT_GRAPH_URL: z
    .url({ protocol: /^https?$/ })
    .transform((value) => value.replace(/\/+$/, ''))
    .default('https://graph.microsoft.com/v1.0'),
  MICROSOFT_LOGIN_URL: z
    .url({ protocol: /^https?$/ })
    .transform((value) => value.replace(/\/+$/, ''))
    .default('https://login.microsoftonline.com'),
  ALLOWED_ORIGINS: list.pipe(z.array(z.url())).default([]),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(60),
  KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(5000).default(2000),
  /** GET /api/mcp streams: SSE keep-alive comment interval, and how often their keys are re-checked. */
  MCP_STREAM_KEEPALIVE_MS: z.coerce.number().int().min(100).default(15_000),
  MCP_STREAM_RECHECK_MS: z.coerce.number().int().min(100).max(10_000).default(1_500),
  /** What one request to /api/mcp may cost (a batch shares it), and how many calls a key runs at once. */
  MCP_MAX_INSTANCES_PER_REQUEST: z.coerce.number().int().min(1).default(20_000),
  MCP_MAX_EVENTS_PER_REQUEST: z.coerce.number().int().min(1).default(10_000),
  MCP_MAX_ANSWER_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(5 * 1024 * 1024),
  MCP_MAX_CONCURRENT_PER_KEY: z.coerce.number().int().min(1).default(4),
  MCP_MAX_QUEUED_PER_KEY: z.coerce.number().int().min(0).default(200),
  /** Worker threads for CPU-bound tool work (recurrence expansion). */
  CPU_WORKERS: z.coerce.number().int().min(0).max(64).default(1),
  MIGRATE_ON_START: flag.default(true),
  WORKER_IN_PROCESS: flag.optional(),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).default(90),
  /** Audit rows held in memory while Postgres does not answer; more go to AUDIT_SPOOL_DIR. */
  AUDIT_BUFFER_ROWS: z.coerce.number().int().min(500).default(50_000),
  /** Where audit rows wait on disk for Postgres (default DATA_DIR/audit-spool). */
  AUDIT_SPOOL_DIR: z.string().min(1).optional(),
  /**
   * Outbound URLs tenants and the operator supply (delivery targets, CalDAV servers, ICS feeds,
   * import URLs, the Google and Microsoft API roots) may reach loopback and private addresses
   * (tests, labs); default false.
   */
  OUTBOUND_ALLOW_PRIVATE: flag.default(false),
  /** The old name of OUTBOUND_ALLOW_PRIVATE, still read (loadConfig takes it for the new name when that is unset). */
  TARGETS_ALLOW_PRIVATE: flag.optional(),
  /** Google push for the mirror: unset decides from PUBLIC_URL (https, not loopback); true/false force it. */
  MIRROR_PUSH: flag.optional(),
  MIRROR_POLL_INTERVAL: z.coerce.number().int().min(5).max(86_400).default(60),
  MIRROR_SYNC_PAGE_SIZE: z.coerce.number().int().min(1).max(2500).default(2500),
  MIRROR_SYNC_CONCURRENCY: z.coerce.number().int().min(1).max(50).default(2),
  MIRROR_READS: flag.default(true),
  MIRROR_MAX_STALENESS: z.coerce.number().min(0).max(3600).default(15),
  /** Seconds between two refreshes of a subscribed feed; a feed's REFRESH-INTERVAL may lengthen it. */
  ICS_REFRESH_INTERVAL: z.coerce.number().int().min(1).max(604_800).default(3600),
  /** Client ID metadata documents may live on loopback or private addresses and be fetched over http (tests, labs). */
  OAUTH_ALLOW_PRIVATE_CLIENTS: flag.default(false),
  /** Lifetime of OAuth access tokens for /api/mcp (at most an hour; clients refresh). */
  OAUTH_ACCESS_TOKEN_TTL_SECS: z.coerce.number().int().min(1).max(3600).default(3600),
  /** Occurrences older than this when a worker reaches them are recorded as missed (`30s`, `5m`, `1h`, seconds). */
  SCHEDULER_MISFIRE_GRACE: z.string().min(1).default('1h'),
  /** `calgate worker`'s health endpoint (GET /healthz). */
  WORKER_HOST: z.string().min(1).default('127.0.0.1'),
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(8788),
  /** Deliveries one worker process runs at once. */
  SCHEDULER_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(64),
  /** Outgoing mail for invitations and password resets (smtp:// or smtps://, credentials in the URL); unset: links are shown instead. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** The From address of that mail. */
  SMTP_FROM: z.string().min(3).default('Calgate <calgate@localhost>'),
  /** Trust X-Forwarded-For from this many proxies (or `true` for any, or a comma-separated list of addresses/CIDRs), so rate limits and audit see the client's address. */
  TRUST_PROXY: z
    .string()
    .min(1)
    .transform((value, context) => {
      const parsed = parseTrustProxy(value);
      if (!parsed.ok) {
        context.addIssue({ code: 'custom', message: parsed.message });
        return z.NEVER;
      }
      return parsed.value;
    })
    .optional(),
  /** Bearer token for GET /metrics (Prometheus); unset: /metrics answers 404. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = ReturnType<typeof toConfig>;

/**
 * The spool's subfolder for one database (host, port and name; never credentials), so gateways of
 * different databases sharing a directory never replay each other's rows.
 */
function spoolFolder(databaseUrl: string | undefined): string {
  if (databaseUrl === undefined) {
    return 'embedded';
  }
  const url = new URL(databaseUrl);
  const name = `${url.hostname}_${url.port || '5432'}_${decodeURIComponent(url.pathname.slice(1)) || 'postgres'}`;
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** `SCHEDULER_MISFIRE_GRACE`: the interval syntax of schedules (`90s`, `5m`, `1h`, plain seconds). */
function graceMs(value: string): number {
  const parsed = parseInterval(value);
  if (!parsed.ok) {
    throw new ConfigError(
      `Invalid configuration:\n✖ ${parsed.error.message}\n  → at SCHEDULER_MISFIRE_GRACE`,
    );
  }
  return parsed.value;
}

function toConfig(env: z.output<typeof Env>) {
  const publicUrl = (env.PUBLIC_URL ?? `http://${env.HOST}:${env.PORT}`).replace(/\/+$/, '');
  return {
    port: env.PORT,
    host: env.HOST,
    publicUrl,
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    lockTtlMs: Math.round(env.LOCK_TTL_SECS * 1000),
    dataDir: env.DATA_DIR,
    encryptionKey: env.ENCRYPTION_KEY,
    previousEncryptionKeys: env.ENCRYPTION_KEYS_PREVIOUS,
    google: {
      clientId: env.GOOGLE_CLIENT_ID,
      clientSecret: env.GOOGLE_CLIENT_SECRET,
      apiRootUrl: env.GOOGLE_API_ROOT_URL,
      oauthUrl: env.GOOGLE_OAUTH_URL,
      serviceAccountKeyFile: env.GOOGLE_SERVICE_ACCOUNT_KEY_FILE,
    },
    microsoft: {
      clientId: env.MICROSOFT_CLIENT_ID,
      clientSecret: env.MICROSOFT_CLIENT_SECRET,
      tenant: env.MICROSOFT_TENANT,
      graphUrl: env.MICROSOFT_GRAPH_URL,
      loginUrl: env.MICROSOFT_LOGIN_URL,
      /** Where a refresh token is exchanged: `${MICROSOFT_LOGIN_URL}/${MICROSOFT_TENANT}/oauth2/v2.0/token`. */
      tokenUrl: `${env.MICROSOFT_LOGIN_URL}/${env.MICROSOFT_TENANT}/oauth2/v2.0/token`,
    },
    allowedOrigins: [
      new URL(publicUrl).origin,
      ...env.ALLOWED_ORIGINS.map((origin) => new URL(origin).origin),
    ],
    rateLimit: { perMinute: env.RATE_LIMIT_PER_MINUTE, burst: env.RATE_LIMIT_BURST },
    keyCacheTtlMs: env.KEY_CACHE_TTL_MS,
    mcpStreams: { keepAliveMs: env.MCP_STREAM_KEEPALIVE_MS, recheckMs: env.MCP_STREAM_RECHECK_MS },
    mcpLimits: {
      budget: {
        instances: env.MCP_MAX_INSTANCES_PER_REQUEST,
        events: env.MCP_MAX_EVENTS_PER_REQUEST,
        answerBytes: env.MCP_MAX_ANSWER_BYTES,
      },
      concurrentPerKey: env.MCP_MAX_CONCURRENT_PER_KEY,
      queuedPerKey: env.MCP_MAX_QUEUED_PER_KEY,
      cpuWorkers: env.CPU_WORKERS,
    },
    migrateOnStart: env.MIGRATE_ON_START,
    /** Run background jobs inside the gateway; by default only with the embedded database. */
    workerInProcess: env.WORKER_IN_PROCESS,
    auditRetentionDays: env.AUDIT_RETENTION_DAYS,
    audit: {
      bufferRows: env.AUDIT_BUFFER_ROWS,
      spoolDir: join(env.AUDIT_SPOOL_DIR ?? join(env.DATA_DIR, 'audit-spool'), spoolFolder(env.DATABASE_URL)),
    },
    scheduler: {
      allowPrivateTargets: env.OUTBOUND_ALLOW_PRIVATE,
      misfireGraceMs: graceMs(env.SCHEDULER_MISFIRE_GRACE),
      concurrency: env.SCHEDULER_CONCURRENCY,
    },
    oauth: {
      allowPrivateClients: env.OAUTH_ALLOW_PRIVATE_CLIENTS,
      accessTokenTtlSeconds: env.OAUTH_ACCESS_TOKEN_TTL_SECS,
    },
    smtp: { url: env.SMTP_URL, from: env.SMTP_FROM },
    trustProxy: env.TRUST_PROXY,
    metricsToken: env.METRICS_TOKEN,
    mirrorPush: env.MIRROR_PUSH,
    mirror: {
      pollIntervalMs: env.MIRROR_POLL_INTERVAL * 1000,
      pageSize: env.MIRROR_SYNC_PAGE_SIZE,
      concurrency: env.MIRROR_SYNC_CONCURRENCY,
      reads: env.MIRROR_READS,
      maxStalenessMs: env.MIRROR_MAX_STALENESS * 1000,
      icsRefreshMs: env.ICS_REFRESH_INTERVAL * 1000,
    },
    workerHealth: { host: env.WORKER_HOST, port: env.WORKER_PORT },
    logLevel: env.LOG_LEVEL,
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates the environment once; packages receive typed values, never process.env. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  // The old name stands for the new one when only it is set; set both, they must agree (below).
  const aliased = present.OUTBOUND_ALLOW_PRIVATE === undefined && present.TARGETS_ALLOW_PRIVATE !== undefined;
  if (aliased) {
    present.OUTBOUND_ALLOW_PRIVATE = present.TARGETS_ALLOW_PRIVATE;
  }
  const parsed = Env.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues
      // A bad old name is reported once, under the name that was set.
      .filter((issue) => !(aliased && issue.path[0] === 'OUTBOUND_ALLOW_PRIVATE'))
      .map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const { OUTBOUND_ALLOW_PRIVATE: outbound, TARGETS_ALLOW_PRIVATE: targets } = parsed.data;
  if (outbound !== undefined && targets !== undefined && outbound !== targets) {
    throw new ConfigError(
      `Invalid configuration:\n  OUTBOUND_ALLOW_PRIVATE=${outbound} and TARGETS_ALLOW_PRIVATE=${targets} disagree; TARGETS_ALLOW_PRIVATE is the old name of OUTBOUND_ALLOW_PRIVATE: set only OUTBOUND_ALLOW_PRIVATE.`,
    );
  }
  const roots = privateApiRoots(parsed.data);
  if (roots.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  ${roots.join('\n  ')}`);
  }
  return toConfig(parsed.data);
}

/** The API roots the operator may point elsewhere (the emulators), each an outbound URL. */
const API_ROOTS = [
  'GOOGLE_API_ROOT_URL',
  'GOOGLE_OAUTH_URL',
  'MICROSOFT_GRAPH_URL',
  'MICROSOFT_LOGIN_URL',
] as const;

/**
 * Why each API root that names a loopback or private address (or `localhost`) is refused,
 * unless OUTBOUND_ALLOW_PRIVATE is true; cloud metadata, multicast and broadcast addresses are
 * refused whatever it says. A host name is taken as named: what it resolves to is not looked up
 * at start.
 */
function privateApiRoots(env: z.output<typeof Env>): string[] {
  const problems: string[] = [];
  for (const name of API_ROOTS) {
    const value = env[name];
    if (value === undefined) {
      continue;
    }
    const host = new URL(value).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const kind: AddressClass | undefined =
      host === 'localhost' || host.endsWith('.localhost') ? 'loopback' : classifyAddress(host);
    if (kind === undefined || kind === 'public') {
      continue;
    }
    const where = `${value} is on ${describeAddressClass(kind)}`;
    if (!PRIVATE_ADDRESS_CLASSES.has(kind)) {
      problems.push(`${name}: ${where}, which Calgate never calls.`);
    } else if (!env.OUTBOUND_ALLOW_PRIVATE) {
      problems.push(
        `${name}: ${where}; Calgate reaches loopback and private addresses only with OUTBOUND_ALLOW_PRIVATE=true (for an emulator in tests and demos).`,
      );
    }
  }
  return problems;
}
