import { CalgateError, canonicalTimeZone as canonical } from '@calgate/core';
import type { TenantRecord } from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type ApiDeps, parse } from './deps.ts';

/** An IANA zone with its usual capitals (core's canonicalTimeZone), or a 400 naming the field. */
export function canonicalTimeZone(field: string, zone: string): string {
  const checked = canonical(zone);
  if (!checked.ok) {
    throw new CalgateError('invalid_argument', `${field}: ${checked.error.message}`);
  }
  return checked.value;
}

const WorkspaceBody = z
  .strictObject({
    name: z.string().trim().min(1, { message: 'give the workspace a name' }).max(100).optional(),
    timeZone: z
      .string()
      .trim()
      .min(1, { message: 'give an IANA zone such as Europe/Berlin, or null to clear' })
      .max(64)
      .nullable()
      .optional(),
  })
  .refine((body) => body.name !== undefined || body.timeZone !== undefined, {
    message: 'give name and/or timeZone (null clears the zone)',
  });

export function workspaceView(tenant: TenantRecord) {
  return { id: tenant.id, name: tenant.name, timeZone: tenant.timeZone };
}

/**
 * The workspace (tenant) settings: its name and time zone, which every key without a zone of its
 * own answers in. Reading is for everyone; changing is for owners and admins (roles.ts default).
 */
export function registerWorkspaceRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/api/v1/workspace', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const tenant = await deps.tenancy.getTenant(tenantId);
    if (tenant === null) {
      throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
    }
    return { workspace: workspaceView(tenant) };
  });

  app.patch('/api/v1/workspace', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const body = parse(WorkspaceBody, request.body);
    const timeZone =
      body.timeZone === undefined || body.timeZone === null
        ? body.timeZone
        : canonicalTimeZone('timeZone', body.timeZone);
    const tenant = await deps.tenancy.updateTenant(tenantId, {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(timeZone === undefined ? {} : { timeZone }),
    });
    if (tenant === null) {
      throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
    }
    // Keys read the workspace zone with their grants: the next call answers in the new zone.
    deps.invalidateKeys(tenantId);
    return { workspace: workspaceView(tenant) };
  });
}
