import { CalgateError } from '@calgate/core';
import type { CalendarRecord, ConnectionRecord } from '@calgate/store';
import { CalendarAccess, type KeyCalendar, type ToolContext } from '@calgate/tools';
import type { FastifyReply } from 'fastify';
import { rulesServices } from '../../rules.ts';
import type { ApiDeps } from './deps.ts';

type SignedIn = { tenantId: string; userId: string };

/** A tenant's calendar as its owner's dashboard reads it: readable whatever keys hold, never written. */
export function ownerView(calendar: CalendarRecord, account: ConnectionRecord): KeyCalendar {
  return {
    id: calendar.id,
    externalId: calendar.externalId,
    summary: calendar.summary,
    timeZone: calendar.timeZone,
    primary: calendar.primary,
    enabled: calendar.enabled,
    accessRole: calendar.accessRole,
    connectionId: calendar.connectionId,
    provider: account.provider,
    auth: account.auth,
    accountEmail: account.accountEmail,
    connectionStatus: account.status,
    canRead: true,
    canWrite: false,
  };
}

/**
 * Every calendar of the tenant, readable: the dashboard is the tenant owner's view, so the
 * Projects & rules page previews, files and totals over all of the tenant's enabled calendars,
 * whatever any key's grants are. Disabled calendars and accounts stay out, as they do for keys.
 */
export async function ownerAccess(deps: ApiDeps, session: SignedIn): Promise<CalendarAccess> {
  const [calendars, connections, tenant] = await Promise.all([
    deps.tenancy.listCalendars(session.tenantId),
    deps.connections.list(session.tenantId),
    deps.tenancy.getTenant(session.tenantId),
  ]);
  const accounts = new Map(connections.map((connection) => [connection.id, connection]));
  const readable: KeyCalendar[] = calendars.flatMap((calendar) => {
    const account = accounts.get(calendar.connectionId);
    if (account === undefined) {
      return [];
    }
    return [ownerView(calendar, account)];
  });
  if (!readable.some((calendar) => calendar.enabled)) {
    throw new CalgateError(
      'not_found',
      'This tenant has no enabled calendar yet: connect an account or create a calendar first.',
    );
  }
  return new CalendarAccess(
    {
      tenantId: session.tenantId,
      keyId: session.userId,
      calendars: readable,
      workspaceTimeZone: tenant?.timeZone ?? null,
    },
    deps.providers,
  );
}

/**
 * What the rules functions shared with the MCP tools need, for the signed-in person. Rules the
 * dashboard writes go through the repository in the user's name, so the services' key id (used
 * only when a tool creates a rule) is never written.
 */
export async function ownerContext(
  deps: ApiDeps,
  reply: FastifyReply,
  session: SignedIn,
): Promise<Pick<ToolContext, 'access' | 'rules' | 'now' | 'signal'>> {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) {
      controller.abort();
    }
  });
  return {
    access: await ownerAccess(deps, session),
    rules: rulesServices(deps.rulesRepository)({ tenantId: session.tenantId, keyId: session.userId }),
    now: () => new Date(),
    signal: controller.signal,
  };
}
