import { type AuditLog, type AuditRecord, clientAddressOf, type UserRepository } from '@calgate/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readCookie, SESSION_COOKIE, type SessionManager } from '../session.ts';

/**
 * Dashboard actions by route (`METHOD url` as registered). `null` marks writes that change
 * nothing (previews), which are not recorded. A state-changing route missing here is still
 * recorded, named by its method and route (`POST /api/v1/foo/:id`).
 */
const ACTIONS: Readonly<Record<string, string | null>> = {
  'POST /api/v1/auth/signup': 'auth.signup',
  'POST /api/v1/auth/signin': 'auth.signin',
  'POST /api/v1/auth/signin/totp': 'auth.signin_totp',
  'POST /api/v1/auth/signout': 'auth.signout',
  'POST /api/v1/auth/reset': 'auth.reset',
  'POST /api/v1/account/password': 'account.password',
  'POST /api/v1/account/totp/setup': 'account.totp_setup',
  'POST /api/v1/account/totp/confirm': 'account.totp_confirm',
  'POST /api/v1/account/totp/disable': 'account.totp_disable',
  'POST /api/v1/sessions/:id/revoke': 'session.revoke',
  'POST /api/v1/sessions/revoke-all': 'sessions.revoke_all',
  'POST /api/v1/keys': 'key.create',
  'PATCH /api/v1/keys/:id': 'key.update',
  'POST /api/v1/keys/:id/revoke': 'key.revoke',
  'POST /api/v1/keys/:id/rotate': 'key.rotate',
  'POST /api/v1/keys/:id/test-call': 'key.test_call',
  'POST /api/v1/confirmations/:id/approve': 'confirmation.approve',
  'POST /api/v1/confirmations/:id/decline': 'confirmation.decline',
  'POST /api/v1/connected-apps/:id/revoke': 'connected_app.revoke',
  'PATCH /api/v1/connected-apps/:id': 'connected_app.update',
  'POST /api/v1/oauth/consent': 'connected_app.approve',
  'PUT /api/v1/grants': 'grant.set',
  'POST /api/v1/grants/bulk': 'grants.bulk',
  'PATCH /api/v1/calendars/:id': 'calendar.update',
  'GET /oauth/google/callback': 'account.connect',
  'GET /oauth/microsoft/callback': 'account.connect',
  'POST /api/v1/connections/service-account': 'account.connect',
  'POST /api/v1/connections/ics': 'account.connect',
  'DELETE /api/v1/connections/:id': 'account.disconnect',
  'POST /api/v1/invitations': 'member.invite',
  'POST /api/v1/invitations/:id/revoke': 'invitation.revoke',
  'POST /api/v1/invitations/accept': 'member.join',
  'PATCH /api/v1/members/:id': 'member.update',
  'DELETE /api/v1/members/:id': 'member.remove',
  'POST /api/v1/projects': 'project.create',
  'PATCH /api/v1/projects/:id': 'project.update',
  'POST /api/v1/rules': 'rule.create',
  'PATCH /api/v1/rules/:id': 'rule.update',
  'DELETE /api/v1/rules/:id': 'rule.delete',
  'POST /api/v1/rules/preview': null,
  'POST /api/v1/rules/apply': 'rules.apply',
  'POST /api/v1/targets': 'target.create',
  'DELETE /api/v1/targets/:id': 'target.delete',
  'POST /api/v1/targets/:id/enable': 'target.enable',
  'POST /api/v1/targets/:id/disable': 'target.disable',
  'POST /api/v1/targets/:id/test': 'target.test',
  'POST /api/v1/schedules/:id/cancel': 'schedule.cancel',
  'POST /api/v1/schedules/:id/pause': 'schedule.pause',
  'POST /api/v1/schedules/:id/resume': 'schedule.resume',
  'POST /api/v1/deliveries/:occurrenceId/replay': 'delivery.replay',
  'PATCH /api/v1/workspace': 'workspace.update',
  'POST /api/v1/calendars/:id/feed': 'calendar.feed_create',
  'DELETE /api/v1/calendars/:id/feed': 'calendar.feed_revoke',
};

/** The names dashboard actions are recorded under (the audit filter's list besides tools). */
export const DASHBOARD_ACTIONS: readonly string[] = [
  ...new Set(Object.values(ACTIONS).filter((name): name is string => name !== null)),
].sort();

/** A name recorded for a route missing from the table, e.g. `POST /api/v1/foo/:id`. */
export const FALLBACK_ACTION = /^(POST|PUT|PATCH|DELETE) \/[\x21-\x7e]{1,200}$/;

/**
 * Body fields that may name what an action acted on. Everything else in a body is ignored, so a
 * password, a key secret or a token can never reach the audit log. Ids are kept as they are,
 * settings as `field=value`.
 */
const BODY_IDS = ['keyId', 'calendarId', 'connectionId', 'userId', 'clientId'] as const;
const BODY_SETTINGS = ['access', 'read', 'write', 'enabled', 'role', 'timeZone', 'hijackPolicy'] as const;

/**
 * Actions whose bodies carry passwords, codes or tokens: their error text is not kept, only the
 * status, in case a message ever quotes what was sent. (A body that is not JSON never reaches
 * the hook: it is refused before any route runs, and changes nothing.)
 */
const SECRET_BODIES = new Set([
  'auth.signup',
  'auth.signin',
  'auth.signin_totp',
  'auth.reset',
  'account.password',
  'account.totp_confirm',
  'account.totp_disable',
  'member.join',
]);

/** Actions that start a session: its cookie names the person, who had no session before. */
const STARTS_SESSION = new Set([
  'auth.signup',
  'auth.signin',
  'auth.signin_totp',
  'member.join',
  'auth.reset',
]);

const MAX_ERROR = 300;
const SAFE_VALUE = /^[\x21-\x7e]{1,200}$/;

/** Who acted: what guard.ts puts on the request, or the session looked up before the handler. */
interface Actor {
  userId: string;
  tenantId: string;
}

interface Pending {
  action: string;
  actor: Actor | null;
  error?: string;
}

export interface DashboardAuditDeps {
  audit: AuditLog;
  sessions: SessionManager;
  users: Pick<UserRepository, 'findByEmail'>;
}

function actionOf(request: FastifyRequest): string | null | undefined {
  const url = request.routeOptions.url;
  if (url === undefined) {
    return undefined;
  }
  const key = `${request.method} ${url}`;
  if (key in ACTIONS) {
    return ACTIONS[key];
  }
  const write = request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS';
  return write && url.startsWith('/api/v1/') ? key : undefined;
}

function actorOf(value: unknown): Actor | null {
  const { userId, tenantId } = (value ?? {}) as { userId?: unknown; tenantId?: unknown };
  return typeof userId === 'string' && typeof tenantId === 'string' ? { userId, tenantId } : null;
}

/** Route params and allow-listed body fields: ids and settings, never free text or secrets. */
function targetOf(request: FastifyRequest): string[] {
  const target: string[] = [];
  const keep = (value: unknown, prefix = '') => {
    const text = typeof value === 'boolean' ? String(value) : value;
    if (typeof text === 'string' && SAFE_VALUE.test(text)) {
      target.push(`${prefix}${text}`);
    }
  };
  for (const value of Object.values((request.params ?? {}) as Record<string, unknown>)) {
    keep(value);
  }
  const body = request.body;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    for (const name of BODY_IDS) {
      keep(fields[name]);
    }
    for (const name of BODY_SETTINGS) {
      keep(fields[name], `${name}=`);
    }
  }
  return target;
}

function parseJson(payload: unknown): unknown {
  if (typeof payload !== 'string') {
    return undefined;
  }
  try {
    return JSON.parse(payload);
  } catch {
    return undefined;
  }
}

function outcomeOf(status: number): AuditRecord['outcome'] {
  if (status < 400) {
    return 'ok';
  }
  return status === 401 || status === 403 ? 'denied' : 'error';
}

/**
 * Records dashboard actions in the audit log beside tool calls, from one place: every
 * state-changing /api/v1 route and the Google and Microsoft connection callbacks, named through a table of
 * routes. The actor is read before the handler (a sign-out ends the session it acts with), the
 * error text from the answer, and the row is written once the answer is sent. Requests without a
 * session are not recorded (they belong to no tenant), except sign-up and sign-in: a successful
 * one names its new session's user, and a wrong password for a known email is recorded as a
 * denied `auth.signin` of that person, in their tenant. No body field is stored but ids and
 * settings from an allow-list; passwords, key secrets and tokens never are. The row keeps the
 * request's address (`request.ip`, the client behind a proxy TRUST_PROXY trusts), no header.
 */
export function registerDashboardAudit(app: FastifyInstance, deps: DashboardAuditDeps): void {
  const pending = new WeakMap<FastifyRequest, Pending>();

  app.addHook('preHandler', async (request) => {
    const action = actionOf(request);
    if (action === null || action === undefined) {
      return;
    }
    // Read now: a sign-out or a password change may end this very session in the handler.
    const given = actorOf(Reflect.get(request, 'dashboardUser'));
    const actor = given ?? actorOf(await deps.sessions.read(request.headers.cookie).catch(() => null));
    pending.set(request, { action, actor });
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const entry = pending.get(request);
    if (entry === undefined) {
      return payload;
    }
    const status = reply.statusCode;
    if (status >= 400) {
      const message = (parseJson(payload) as { error?: { message?: unknown } } | undefined)?.error?.message;
      entry.error = SECRET_BODIES.has(entry.action)
        ? `HTTP ${status}`
        : typeof message === 'string'
          ? message.slice(0, MAX_ERROR)
          : `HTTP ${status}`;
    }
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const entry = pending.get(request);
    if (entry === undefined) {
      return;
    }
    pending.delete(request);
    // The guard's view (set while the handler ran) wins over the session read before it.
    const actor =
      (await startedSession(reply, entry)) ??
      (await failedSignIn(request, reply, entry)) ??
      actorOf(Reflect.get(request, 'dashboardUser')) ??
      entry.actor;
    if (actor === null) {
      return;
    }
    deps.audit.record({
      tenantId: actor.tenantId,
      keyId: null,
      requestId: request.id,
      tool: entry.action,
      calendarIds: [],
      outcome: outcomeOf(reply.statusCode),
      errorCode: null,
      latencyMs: Math.round(reply.elapsedTime),
      at: new Date(),
      kind: 'dashboard',
      actorUserId: actor.userId,
      target: targetOf(request),
      clientName: null,
      errorMessage: entry.error ?? null,
      clientAddress: clientAddressOf(request.ip),
    });
  });

  /** The person whose session a sign-in (sign-up, invitation, reset) just started. */
  async function startedSession(reply: FastifyReply, entry: Pending): Promise<Actor | null> {
    if (!STARTS_SESSION.has(entry.action) || reply.statusCode >= 400) {
      return null;
    }
    const header = reply.getHeader('set-cookie');
    const values = (Array.isArray(header) ? header : [header]).filter((value) => typeof value === 'string');
    for (const value of values) {
      const pair = value.split(';')[0] ?? '';
      if (readCookie(pair, SESSION_COOKIE) !== undefined) {
        return actorOf(await deps.sessions.read(pair).catch(() => null));
      }
    }
    return null;
  }

  /** A wrong password for a known email: that person, so their tenant sees the attempt. */
  async function failedSignIn(
    request: FastifyRequest,
    reply: FastifyReply,
    entry: Pending,
  ): Promise<Actor | null> {
    if (entry.action !== 'auth.signin' || reply.statusCode !== 401) {
      return null;
    }
    const email = (request.body as { email?: unknown } | null)?.email;
    if (typeof email !== 'string') {
      return null;
    }
    const user = await deps.users.findByEmail(email).catch(() => null);
    return user === null ? null : { userId: user.id, tenantId: user.tenantId };
  }
}
