import { CalgateError } from '@calgate/core';
import {
  type ConnectionRepository,
  DEFAULT_TOOLSETS,
  HIJACK_POLICIES,
  type OAuthRepository,
  type TenancyRepository,
  TOOLSETS,
} from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parse } from '../http/api/deps.ts';
import type { DashboardGuard } from '../http/api/guard.ts';
import { redirectWith } from './server.ts';
import type { AuthorizationRequests, PendingAuthorization, Scope } from './tokens.ts';

export interface ConsentDeps {
  guard: DashboardGuard;
  oauth: OAuthRepository;
  tenancy: TenancyRepository;
  connections: ConnectionRepository;
  requests: AuthorizationRequests;
  publicUrl: string;
  /** Forgets cached key lookups: approving an app again changes its connection's grants. */
  invalidateKeys(tenantId?: string): void;
}

const TOOLSET_DESCRIPTIONS: Record<string, string> = {
  calendar: 'Read and manage events (writes only on calendars with Write)',
  booking: 'Find free time and book slots',
  search: 'Search events and fetch them (search / fetch)',
  rules: 'Projects, classification rules and timesheets',
  scheduler: 'Prompts the app schedules for itself',
  ics: 'Import iCalendar (.ics) files and feeds into calendars with Write',
};

/** The scopes in plain words, for the consent page to say what the client asks for. */
const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'calendars:read': 'See the calendars you tick below and their events',
  'calendars:write': 'Create, change and delete events on the calendars you tick Write for',
};

const RequestQuery = z.strictObject({ request: z.string().min(1).max(8192) });

const Decision = z.strictObject({
  request: z.string().min(1).max(8192),
  decision: z.enum(['allow', 'deny'], { message: "decision must be 'allow' or 'deny'" }),
  calendars: z
    .array(z.strictObject({ calendarId: z.string().min(1).max(64), read: z.boolean(), write: z.boolean() }))
    .max(1000)
    .default([]),
  toolsets: z
    .array(z.string().max(64))
    .max(TOOLSETS.length * 2)
    .default([...DEFAULT_TOOLSETS]),
  /** Absent: 'ask' for a new connection, unchanged for an app approved again. */
  hijackPolicy: z.enum(HIJACK_POLICIES, { message: `use one of ${HIJACK_POLICIES.join(', ')}` }).optional(),
});

function writable(accessRole: string): boolean {
  return accessRole === 'owner' || accessRole === 'writer';
}

/**
 * The consent page's API: what a pending authorization asks for, and the signed-in person's
 * answer. Approval creates a connection (an api_keys row of kind oauth) in the person's own
 * tenant with exactly the calendars and toolsets they ticked, then a single-use code for the
 * client; a denial sends the client `access_denied`. Either way the browser is sent back to the
 * redirect URI that /oauth/authorize checked against the client.
 */
export function registerConsentRoutes(app: FastifyInstance, deps: ConsentDeps): void {
  async function pending(token: string): Promise<PendingAuthorization> {
    const opened = await deps.requests.open(token);
    if (opened === 'expired') {
      throw new CalgateError(
        'invalid_argument',
        'This authorization request has expired (they last 10 minutes): start connecting again from the app.',
      );
    }
    if (opened === 'invalid') {
      throw new CalgateError(
        'invalid_argument',
        'This authorization request is not valid: start connecting again from the app.',
      );
    }
    return opened;
  }

  async function clientOf(request: PendingAuthorization) {
    const client = await deps.oauth.getClient(request.clientId);
    if (client === null) {
      throw new CalgateError('not_found', 'The app of this authorization request is no longer registered.');
    }
    return client;
  }

  async function calendarsOf(tenantId: string) {
    const [calendars, connections] = await Promise.all([
      deps.tenancy.listCalendars(tenantId),
      deps.connections.list(tenantId),
    ]);
    // Calendars kept by Calgate itself have no account to name.
    const emails = new Map(
      connections.map((connection) => [
        connection.id,
        connection.provider === 'local' ? 'Calgate calendars' : connection.accountEmail,
      ]),
    );
    return calendars
      .filter((calendar) => calendar.enabled)
      .map((calendar) => ({
        id: calendar.id,
        summary: calendar.summary,
        accountEmail: emails.get(calendar.connectionId) ?? '',
        writable: writable(calendar.accessRole),
      }));
  }

  /** The policy of the person's live connection of this app (approving again), else the default. */
  async function currentPolicy(tenantId: string, userId: string, clientId: string) {
    const live = (await deps.oauth.listConnections(tenantId)).filter(
      (c) => c.clientId === clientId && c.userId === userId && c.revokedAt === null,
    );
    return live.at(-1)?.hijackPolicy ?? 'ask';
  }

  app.get('/api/v1/oauth/consent', async (request) => {
    const { tenantId, userId } = await deps.guard.session(request);
    const query = parse(RequestQuery, request.query);
    const authorization = await pending(query.request);
    const client = await clientOf(authorization);
    return {
      client: {
        clientId: client.clientId,
        name: client.clientName,
        kind: client.kind,
        redirectHost: new URL(authorization.redirectUri).host,
      },
      // What the client asked for (all scopes when it named none), in plain words.
      scopes: authorization.scopes.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] })),
      // Members connect apps with Read only, so their page offers no Write.
      allowWrite:
        authorization.scopes.includes('calendars:write') && request.dashboardUser?.role !== 'member',
      calendars: await calendarsOf(tenantId),
      toolsets: TOOLSETS.map((name) => ({
        name,
        description: TOOLSET_DESCRIPTIONS[name] ?? name,
        checked: (DEFAULT_TOOLSETS as readonly string[]).includes(name),
      })),
      hijackPolicy: await currentPolicy(tenantId, userId, client.clientId),
    };
  });

  app.post('/api/v1/oauth/consent', async (request) => {
    const session = await deps.guard.session(request);
    const body = parse(Decision, request.body);
    const authorization = await pending(body.request);
    const client = await clientOf(authorization);
    const back = (params: Record<string, string | undefined>) => ({
      redirectTo: redirectWith(authorization.redirectUri, deps.publicUrl, {
        ...params,
        state: authorization.state,
      }),
    });
    if (body.decision === 'deny') {
      return back({ error: 'access_denied', error_description: 'The person declined to connect this app.' });
    }
    const available = new Map(
      (await calendarsOf(session.tenantId)).map((calendar) => [calendar.id, calendar]),
    );
    const allowWrite = authorization.scopes.includes('calendars:write');
    for (const { calendarId, write } of body.calendars) {
      const calendar = available.get(calendarId);
      if (calendar === undefined) {
        throw new CalgateError('not_found', `No calendar ${calendarId} in your workspace.`);
      }
      // Auditors never get here (roles.ts); members connect apps with Read only.
      if (write && request.dashboardUser?.role === 'member') {
        throw new CalgateError(
          'permission_denied',
          `Members can connect apps with Read only: untick Write on ${calendar.summary}, or ask an owner or admin to grant Write.`,
        );
      }
      if (write && !allowWrite) {
        throw new CalgateError(
          'invalid_argument',
          `${client.clientName} asked for read access only; Write cannot be granted on ${calendar.summary}.`,
        );
      }
      if (write && !calendar.writable) {
        throw new CalgateError(
          'invalid_argument',
          `${calendar.summary} is read-only for Calgate; Write cannot be granted on it.`,
        );
      }
    }
    const keyId = await deps.oauth.createConnection({
      tenantId: session.tenantId,
      userId: session.userId,
      clientId: client.clientId,
      name: client.clientName,
      toolsets: body.toolsets,
      calendars: body.calendars,
      hijackPolicy: body.hijackPolicy,
    });
    deps.invalidateKeys(session.tenantId);
    const granted = body.calendars.some((calendar) => calendar.write)
      ? 'calendars:read calendars:write'
      : 'calendars:read';
    const code = await deps.oauth.issueCode({
      tenantId: session.tenantId,
      keyId,
      clientId: client.clientId,
      redirectUri: authorization.redirectUri,
      codeChallenge: authorization.codeChallenge,
      resource: authorization.resource,
      scope: granted,
    });
    return back({ code });
  });
}
