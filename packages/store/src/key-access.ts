import type { ConnectionAuthKind, ConnectionProviderKind } from './connections.ts';
import type { Database } from './db.ts';

/** A calendar as one key sees it: the grant and what the tools need to reach it. */
export interface GrantedCalendar {
  id: string;
  externalId: string;
  summary: string;
  timeZone: string;
  primary: boolean;
  enabled: boolean;
  accessRole: string;
  connectionId: string;
  provider: ConnectionProviderKind;
  auth: ConnectionAuthKind;
  accountEmail: string;
  connectionStatus: 'active' | 'needs_reauth' | 'disabled';
  canRead: boolean;
  canWrite: boolean;
}

/** Everything the gateway needs to authorise calls with one key, read in one round trip. */
export interface KeyAccess {
  keyId: string;
  tenantId: string;
  name: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  calendars: GrantedCalendar[];
  /**
   * What `primary` means for this key: the calendar set for it while the key can read it. Unset
   * ("Automatic") or no longer readable: the enabled primary calendar of the first-connected
   * Google account the key can read; else null, leaving the choice to CalendarAccess (a readable
   * primary such as the first-run local calendar, else the first readable calendar).
   */
  defaultCalendarId: string | null;
  /** The key's own IANA time zone, when set. */
  timeZone: string | null;
  /** The workspace's (tenant's) IANA time zone, when set: the zone of a key without its own. */
  workspaceTimeZone: string | null;
  /** The toolsets whose tools the key's agent sees. */
  toolsets: string[];
  /** The agent this key's scheduled prompts go to when neither the call nor its _meta names one. */
  defaultAgentId: string | null;
  /** An API key, or an MCP client's connection approved through OAuth consent (a connected app). */
  kind: 'key' | 'oauth';
  /** The tenant's own addresses, lower-cased: its connected accounts' and its users' emails. */
  tenantAddresses: string[];
  /** What the key's risky actions need after its agent was shown suspicious content. */
  hijackPolicy: 'strict' | 'ask' | 'off';
}

interface Row {
  key_id: string;
  tenant_id: string;
  name: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  time_zone: string | null;
  workspace_time_zone: string | null;
  toolsets: string[];
  default_agent_id: string | null;
  kind: 'key' | 'oauth';
  default_calendar_id: string | null;
  calendars: GrantedCalendar[] | null;
  tenant_addresses: string[] | null;
  hijack_policy: 'strict' | 'ask' | 'off';
}

// Raw SQL on purpose: this runs on every cache miss of the bearer-key lookup. EXPIRES is the
// expression for expires_at: a secret replaced by a rotation also ends with its grace period.
const query = (expires: string) => `
SELECT k.id AS key_id, k.tenant_id, k.name, ${expires} AS expires_at, k.revoked_at, k.time_zone,
  (SELECT t.time_zone FROM tenants t WHERE t.id = k.tenant_id) AS workspace_time_zone, k.toolsets, k.default_agent_id, k.kind, k.hijack_policy,
  COALESCE(
    (SELECT g.calendar_id FROM grants g
     WHERE g.key_id = k.id AND g.calendar_id = k.default_calendar_id AND g.can_read),
    -- Automatic: a connected Google account's primary beats the first-run local calendar, which
    -- was created before any account and would otherwise come first.
    (SELECT c.id FROM grants g
     JOIN calendars c ON c.id = g.calendar_id AND c.tenant_id = k.tenant_id
     JOIN connections n ON n.id = c.connection_id AND n.tenant_id = k.tenant_id
     WHERE g.key_id = k.id AND g.can_read AND c.is_primary AND c.enabled
       AND n.provider = 'google' AND n.status <> 'disabled'
     ORDER BY n.created_at, n.id, c.id LIMIT 1)) AS default_calendar_id,
  (SELECT json_agg(json_build_object(
      'id', c.id, 'externalId', c.external_id, 'summary', c.summary, 'timeZone', c.time_zone,
      'primary', c.is_primary, 'enabled', c.enabled, 'accessRole', c.access_role,
      'connectionId', n.id, 'provider', n.provider, 'auth', n.auth, 'accountEmail', n.account_email,
      'connectionStatus', n.status, 'canRead', g.can_read, 'canWrite', g.can_write)
      ORDER BY n.created_at, n.id, c.is_primary DESC, c.summary, c.id)
   FROM grants g
   JOIN calendars c ON c.id = g.calendar_id AND c.tenant_id = k.tenant_id
   JOIN connections n ON n.id = c.connection_id AND n.tenant_id = k.tenant_id
   WHERE g.key_id = k.id AND (g.can_read OR g.can_write)) AS calendars,
  ARRAY(SELECT lower(n.account_email) FROM connections n WHERE n.tenant_id = k.tenant_id AND n.account_email LIKE '%@%'
    UNION SELECT lower(u.email) FROM users u WHERE u.tenant_id = k.tenant_id) AS tenant_addresses
FROM api_keys k`;

const BY_ID = query('k.expires_at');
// A secret that a rotation replaced matches only until its grace period ends, and then reads as
// expiring at that moment, so the authenticator (which checks expiry against the clock on every
// call, cached or not) refuses it on time.
const BY_HASH = query(
  'CASE WHEN k.hash = $1 THEN k.expires_at ELSE LEAST(k.expires_at, k.previous_valid_until) END',
);

/** The key whose current secret, or replaced secret still in its grace period, has this hash. */
export async function loadKeyAccess(db: Database, hash: Uint8Array): Promise<KeyAccess | null> {
  return keyAccessWhere(
    db,
    BY_HASH,
    'k.hash = $1 OR (k.previous_hash = $1 AND k.previous_valid_until > now())',
    [hash],
  );
}

/** The same, by key id within a tenant: for work done in a key's name outside a request (scheduled prompts). */
export async function loadKeyAccessById(
  db: Database,
  tenantId: string,
  keyId: string,
): Promise<KeyAccess | null> {
  return keyAccessWhere(db, BY_ID, 'k.tenant_id = $1 AND k.id = $2', [tenantId, keyId]);
}

async function keyAccessWhere(
  db: Database,
  sql: string,
  where: string,
  values: unknown[],
): Promise<KeyAccess | null> {
  const { rows } = await db.pool.query<Row>(`${sql} WHERE ${where}`, values);
  const [row] = rows;
  if (row === undefined) {
    return null;
  }
  return {
    keyId: row.key_id,
    tenantId: row.tenant_id,
    name: row.name,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    calendars: row.calendars ?? [],
    defaultCalendarId: row.default_calendar_id,
    timeZone: row.time_zone,
    workspaceTimeZone: row.workspace_time_zone,
    toolsets: row.toolsets,
    defaultAgentId: row.default_agent_id,
    kind: row.kind,
    tenantAddresses: row.tenant_addresses ?? [],
    hijackPolicy: row.hijack_policy,
  };
}
