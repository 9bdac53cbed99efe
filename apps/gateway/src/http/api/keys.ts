import { CalgateError } from '@calgate/core';
import {
  type ApiKeySummary,
  HIJACK_POLICIES,
  type KeyDefaults,
  MAX_ROTATION_GRACE_SECONDS,
  PeopleRepository,
  TOOLSETS,
} from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type ApiDeps, parse } from './deps.ts';
import { registerTestCallRoute } from './test-call.ts';

/** Names are checked by the store, whose message lists the valid toolsets. */
const Toolsets = z.array(z.string().max(64)).max(TOOLSETS.length * 2);

const CreateKeyBody = z.strictObject({
  name: z.string().trim().min(1, { message: 'give the key a name' }).max(100),
  expiresAt: z.iso
    .datetime({ offset: true, message: 'use an RFC 3339 date-time, e.g. 2027-01-01T00:00:00Z' })
    .refine((value) => Date.parse(value) > Date.now(), { message: 'must be in the future' })
    .optional(),
  toolsets: Toolsets.optional(),
  /** The key's own zone (checked by the store); absent: the workspace's. */
  timeZone: z.string().trim().min(1, { message: 'give an IANA zone, or leave it out' }).max(64).optional(),
  /** The calendars the key gets at once, checked like the matrix; all or nothing. */
  grants: z
    .array(
      z.strictObject({ calendarId: z.string().trim().min(1).max(64), read: z.boolean(), write: z.boolean() }),
    )
    .max(500)
    .optional(),
});

const RotateBody = z.strictObject({
  graceSeconds: z
    .number()
    .int({ message: 'give whole seconds' })
    .min(0)
    .max(MAX_ROTATION_GRACE_SECONDS, { message: `at most ${MAX_ROTATION_GRACE_SECONDS} (24 h)` })
    .optional(),
});

const KeyParams = z.strictObject({ id: z.string().min(1).max(64) });

/** A value sets, null clears (back to Calgate's choice), absent leaves as is. */
const DefaultsBody = z
  .strictObject({
    defaultCalendarId: z
      .string()
      .trim()
      .min(1, { message: 'give a calendar id, or null to clear' })
      .max(64)
      .nullable()
      .optional(),
    timeZone: z
      .string()
      .trim()
      .min(1, { message: 'give an IANA zone, or null to clear' })
      .max(64)
      .nullable()
      .optional(),
    toolsets: Toolsets.optional(),
    defaultAgentId: z
      .string()
      .trim()
      .min(1, { message: 'give an agent id, or null to clear' })
      .max(200)
      .nullable()
      .optional(),
    hijackPolicy: z.enum(HIJACK_POLICIES, { message: `use one of ${HIJACK_POLICIES.join(', ')}` }).optional(),
  })
  .refine(
    (body) =>
      body.defaultCalendarId !== undefined ||
      body.timeZone !== undefined ||
      body.toolsets !== undefined ||
      body.defaultAgentId !== undefined ||
      body.hijackPolicy !== undefined,
    {
      message:
        'give defaultCalendarId, timeZone, defaultAgentId (null clears one), toolsets and/or hijackPolicy',
    },
  );

function view(key: ApiKeySummary & Partial<KeyDefaults>) {
  const { id, name, prefix, createdAt, lastUsedAt, expiresAt, revokedAt } = key;
  return {
    id,
    name,
    prefix,
    createdAt,
    lastUsedAt,
    expiresAt,
    revokedAt,
    defaultCalendarId: key.defaultCalendarId ?? null,
    timeZone: key.timeZone ?? null,
    defaultAgentId: key.defaultAgentId ?? null,
    ...(key.toolsets === undefined ? {} : { toolsets: key.toolsets }),
    ...(key.hijackPolicy === undefined ? {} : { hijackPolicy: key.hijackPolicy }),
  };
}

function noSuchKey(id: string): CalgateError {
  return new CalgateError('not_found', `No API key ${id} in this tenant.`);
}

/** API keys: list, create (secret shown once), set defaults and toolsets, revoke, rotate. */
export function registerKeyRoutes(app: FastifyInstance, deps: ApiDeps): void {
  /** Records who created a key, so members can manage their own keys (roles.ts). */
  const people = new PeopleRepository(deps.db);
  app.get('/api/v1/keys', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    return { keys: (await deps.keys.list(tenantId)).map(view), toolsets: TOOLSETS };
  });

  app.post('/api/v1/keys', async (request, reply) => {
    const { tenantId, userId } = await deps.guard.session(request);
    const body = parse(CreateKeyBody, request.body);
    if (request.dashboardUser?.role === 'member' && (body.grants?.length ?? 0) > 0) {
      throw new CalgateError(
        'permission_denied',
        'Members cannot change grants: create the key without grants, then ask an owner or admin.',
      );
    }
    const { key, secret } = await deps.keys.create(tenantId, {
      name: body.name,
      expiresAt: body.expiresAt === undefined ? null : new Date(body.expiresAt),
      toolsets: body.toolsets,
      grants: body.grants,
      timeZone: body.timeZone,
    });
    await people.setKeyCreator(tenantId, key.id, { userId });
    deps.invalidateKeys(tenantId);
    reply.status(201).header('cache-control', 'no-store');
    return {
      key: view(key),
      secret,
      note: 'Copy the secret now: Calgate keeps only its hash and cannot show it again.',
    };
  });

  app.patch('/api/v1/keys/:id', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(KeyParams, request.params);
    const body = parse(DefaultsBody, request.body);
    const key = await deps.keys.setDefaults(tenantId, id, body);
    deps.invalidateKeys(tenantId);
    return { key: view(key) };
  });

  app.post('/api/v1/keys/:id/revoke', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(KeyParams, request.params);
    if (!(await deps.keys.revoke(tenantId, id))) {
      throw noSuchKey(id);
    }
    deps.invalidateKeys(tenantId);
    const key = await deps.keys.get(tenantId, id);
    if (key === null) {
      throw noSuchKey(id);
    }
    return { key: view(key) };
  });

  app.post('/api/v1/keys/:id/rotate', async (request, reply) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(KeyParams, request.params);
    const { graceSeconds } = parse(RotateBody, request.body);
    const rotated = await deps.keys.rotate(tenantId, id, graceSeconds === undefined ? {} : { graceSeconds });
    if (rotated === null) {
      throw noSuchKey(id);
    }
    deps.invalidateKeys(tenantId);
    reply.status(201).header('cache-control', 'no-store');
    const { previousValidUntil } = rotated;
    return {
      key: view(rotated.key),
      secret: rotated.secret,
      previousValidUntil,
      note:
        previousValidUntil === null
          ? 'Copy the new secret now: the old one no longer works.'
          : `Copy the new secret now: the old one keeps working until ${previousValidUntil.toISOString()}.`,
    };
  });

  registerTestCallRoute(app, deps);
}
