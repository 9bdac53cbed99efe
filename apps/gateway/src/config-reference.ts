/**
 * What each setting of config.ts means, for the table of docs/settings.md and .env.example
 * (`npm run docs:generate` writes both; config-docs.test.ts fails when a setting has no line here or
 * is missing from either). Defaults and optionality are read from the zod schema itself.
 */
import { Env } from './config.ts';

export const SETTING_DESCRIPTIONS: Record<string, string> = {
  PORT: 'TCP port the gateway listens on.',
  HOST: 'Address the gateway listens on (`0.0.0.0` in containers).',
  PUBLIC_URL:
    'The URL clients and browsers use to reach Calgate (OAuth redirects, the MCP URL, cookies); default `http://HOST:PORT`. Use `https://…` behind TLS.',
  DATABASE_URL:
    'PostgreSQL connection URL (`postgresql://user:password@host:5432/db`). Unset: an embedded PostgreSQL under DATA_DIR (evaluation only).',
  REDIS_URL:
    'Redis URL (`redis://:password@host:6379`) for rate limits, booking locks and log levels shared between gateways. Unset: in-process, for one gateway only.',
  DATA_DIR: 'Local state: the embedded database and its key, and the audit spool.',
  LOCK_TTL_SECS: "How long a booking's slot lease lasts if its holder stalls.",
  ENCRYPTION_KEY:
    'Master key sealing stored OAuth tokens and secrets: 32 bytes as base64 (`openssl rand -base64 32`). Required with DATABASE_URL (embedded: generated once into DATA_DIR, mode 0600). Losing it loses every stored token.',
  ENCRYPTION_KEYS_PREVIOUS:
    'Comma-separated earlier keys, still accepted for reading while `calgate secrets reseal` moves secrets to ENCRYPTION_KEY.',
  GOOGLE_CLIENT_ID:
    'OAuth client ID of your Google Cloud project, for connecting Google accounts. Unset: Google connect is disabled with a clear message.',
  GOOGLE_CLIENT_SECRET: 'OAuth client secret of that client.',
  GOOGLE_API_ROOT_URL:
    'Google Calendar API root; for the emulator in tests and demos only. A loopback or private address is refused at start unless OUTBOUND_ALLOW_PRIVATE=true.',
  GOOGLE_OAUTH_URL:
    'Google OAuth endpoints root; for the emulator in tests and demos only. A loopback or private address is refused at start unless OUTBOUND_ALLOW_PRIVATE=true.',
  GOOGLE_SERVICE_ACCOUNT_KEY_FILE:
    'Path to a service-account JSON key; calendars shared with its email can be added without a user sign-in.',
  MICROSOFT_CLIENT_ID:
    'Application (client) ID of your Microsoft Entra app registration, for connecting Microsoft 365 and Outlook.com accounts. Unset: Microsoft connect is disabled with a clear message.',
  MICROSOFT_CLIENT_SECRET: 'Client secret of that app registration.',
  MICROSOFT_TENANT:
    'Which accounts may sign in: `common` (work, school and personal), `organizations`, `consumers`, or one tenant (its domain or id).',
  MICROSOFT_GRAPH_URL:
    'Microsoft Graph root including its version; paths are appended to it. For the emulator in tests and demos only: a loopback or private address is refused at start unless OUTBOUND_ALLOW_PRIVATE=true.',
  MICROSOFT_LOGIN_URL:
    'Microsoft identity platform root; the token endpoint is `MICROSOFT_LOGIN_URL/MICROSOFT_TENANT/oauth2/v2.0/token`. For the emulator in tests and demos only: a loopback or private address is refused at start unless OUTBOUND_ALLOW_PRIVATE=true.',
  ALLOWED_ORIGINS:
    "Comma-separated extra browser origins allowed to call /api/mcp and the OAuth endpoints (PUBLIC_URL's origin always is).",
  RATE_LIMIT_PER_MINUTE: 'MCP requests per minute per API key (sustained).',
  RATE_LIMIT_BURST: 'MCP requests an API key may send at once; also the largest batch.',
  KEY_CACHE_TTL_MS: 'How long a gateway caches an API key lookup (revocation takes effect within this).',
  MCP_STREAM_KEEPALIVE_MS: 'Keep-alive interval of GET /api/mcp event streams.',
  MCP_STREAM_RECHECK_MS: "How often an open stream re-checks its key (revoked keys' streams close).",
  MCP_MAX_INSTANCES_PER_REQUEST: 'Recurring-event instances one /api/mcp request may expand.',
  MCP_MAX_EVENTS_PER_REQUEST: 'Events one /api/mcp request may read.',
  MCP_MAX_ANSWER_BYTES:
    "Largest answer of one /api/mcp request, in bytes; also the largest iCalendar text import_events takes (a request's body may be twice this).",
  MCP_MAX_CONCURRENT_PER_KEY: 'Tool calls one key runs at once.',
  MCP_MAX_QUEUED_PER_KEY: "Tool calls waiting for one of the key's slots before calls are refused.",
  CPU_WORKERS: 'Worker threads for CPU-bound tool work (recurrence expansion); 0 runs it in-process.',
  MIGRATE_ON_START:
    'Apply database migrations when a gateway or worker starts. Set `false` when `calgate migrate` runs as its own step.',
  WORKER_IN_PROCESS:
    'Run scheduled-prompt delivery and upkeep inside the gateway. Default: yes for `calgate start`, no for `calgate serve`.',
  AUDIT_RETENTION_DAYS: 'Days audit rows are kept.',
  AUDIT_BUFFER_ROWS: 'Audit rows held in memory while Postgres does not answer; more go to AUDIT_SPOOL_DIR.',
  AUDIT_SPOOL_DIR:
    'Where audit rows wait on disk for Postgres (default DATA_DIR/audit-spool; one subfolder per database). Must survive a restart.',
  OUTBOUND_ALLOW_PRIVATE:
    'Let outbound URLs that tenants and the operator supply reach loopback, private or link-local addresses (tests, labs): scheduled-prompt delivery targets, subscribed ICS feeds and `import_events` URLs (which may then also use plain http), CalDAV servers (plain http only to a server on such an address: a password never crosses the internet in clear), and the API roots GOOGLE_API_ROOT_URL, GOOGLE_OAUTH_URL, MICROSOFT_GRAPH_URL and MICROSOFT_LOGIN_URL (a process refuses to start with one of those on such an address, `localhost` or a host name resolving to one, unless this is true). Cloud metadata addresses stay refused. Each process (gateway, worker, CLI) reads its own: a gateway refuses to schedule to a target it refuses, and an occurrence a worker refuses waits as `blocked` until a worker starts.',
  TARGETS_ALLOW_PRIVATE:
    'The old name of OUTBOUND_ALLOW_PRIVATE, still read; set one of the two (they must agree).',
  OAUTH_ALLOW_PRIVATE_CLIENTS:
    'Let OAuth client metadata documents live on private addresses and plain http (tests, labs).',
  OAUTH_ACCESS_TOKEN_TTL_SECS: 'Lifetime of OAuth access tokens for /api/mcp (at most an hour).',
  SCHEDULER_MISFIRE_GRACE:
    'Occurrences older than this when a worker reaches them are recorded as missed (`30s`, `5m`, `1h`).',
  WORKER_HOST: "Address of `calgate worker`'s health endpoint (GET /healthz).",
  WORKER_PORT: "Port of `calgate worker`'s health endpoint.",
  SCHEDULER_CONCURRENCY:
    'Deliveries one worker process runs at once (claimed in batches of a quarter of it).',
  SMTP_URL:
    'Outgoing mail for invitations and password resets (`smtp://` or `smtps://`, credentials in the URL). Unset: links are shown instead.',
  SMTP_FROM: 'The From address of that mail.',
  TRUST_PROXY:
    'Believe X-Forwarded-For from proxies: `true` (any), a number of hops, or comma-separated addresses/CIDRs. Rate limits and the audit then see the client address.',
  METRICS_TOKEN:
    'Bearer token for GET /metrics (Prometheus, at least 16 characters). Unset: /metrics answers 404.',
  MIRROR_PUSH:
    'Push keeps mirrored calendars fresh: a Google push channel per Google calendar (delivering to `PUBLIC_URL/api/google/push`) and a Graph subscription per Outlook calendar (`PUBLIC_URL/api/microsoft/push`). Unset: on when PUBLIC_URL is https and not loopback, so Google and Microsoft can reach it; `true` or `false` force it. CalDAV calendars and subscribed feeds have no push and are always polled; polling stays the fallback for the others.',
  MIRROR_POLL_INTERVAL:
    "Seconds a recently read calendar's mirror may lag before the worker polls its provider for changes: Google (sync token), Outlook (Graph delta link) or the CalDAV server (sync-collection or ctag). The fallback when no push arrives, and the only way for CalDAV; subscribed ICS feeds are refreshed on ICS_REFRESH_INTERVAL instead.",
  MIRROR_SYNC_PAGE_SIZE:
    "Events asked per page while syncing a mirror: Google's `maxResults` (at most 2500) and Outlook's `odata.maxpagesize` (at most 1000: Calgate asks no more of Graph). CalDAV objects are read 200 at a time and feeds whole, whatever this says.",
  MIRROR_SYNC_CONCURRENCY: 'Calendars one worker process syncs at once.',
  MIRROR_READS:
    "Answer listings and searches of mirrored calendars (Google, Outlook, CalDAV, subscribed feeds) from the mirror (`false`: every read asks the provider). Booking's conflict checks always ask the provider.",
  MIRROR_MAX_STALENESS:
    'Seconds since its last sync for which a mirrored calendar is read as it is; older (and no push channel vouching for it), one incremental sync runs before the read. 0: always sync first.',
  ICS_REFRESH_INTERVAL:
    "Seconds between two refreshes of a subscribed calendar feed (asked with its ETag / Last-Modified); a feed's REFRESH-INTERVAL or X-PUBLISHED-TTL may lengthen it, never shorten it.",
  LOG_LEVEL: 'fatal, error, warn, info, debug, trace or silent.',
};

export interface SettingDoc {
  name: string;
  /** The default as text; undefined when the setting has none. */
  defaultValue: string | undefined;
  description: string | undefined;
}

interface SchemaDef {
  type?: string;
  defaultValue?: unknown;
}

function defaultText(value: unknown): string {
  if (Array.isArray(value)) {
    return value.join(',');
  }
  return String(value);
}

/** Every setting the schema reads, in schema order, with its default and description. */
export function settingDocs(): SettingDoc[] {
  return Object.entries(Env.shape).map(([name, schema]) => {
    const def = (schema as { def?: SchemaDef }).def ?? {};
    return {
      name,
      defaultValue: def.type === 'default' ? defaultText(def.defaultValue) : undefined,
      description: SETTING_DESCRIPTIONS[name],
    };
  });
}
