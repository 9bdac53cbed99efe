import { CalgateError } from '@calgate/core';
import { checkTargetUrl, parseTargetUrl, testDeliveryTarget } from '@calgate/scheduler';
import { AGENT_ID_MAX, TARGET_NAME_MAX, TARGET_URL_MAX, type TargetRecord } from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { originOf } from '../../scheduler.ts';
import { parse } from './deps.ts';
import type { SchedulerApiDeps } from './scheduler.ts';

const IdParams = z.strictObject({ id: z.string().min(1).max(64) });
const Name = z.string().trim().min(1, { message: 'give the target a name' }).max(TARGET_NAME_MAX);
const Url = z
  .string()
  .trim()
  .min(1, { message: 'give the URL the target receives at' })
  .max(TARGET_URL_MAX, { message: `the URL is at most ${TARGET_URL_MAX} characters` });

const NewTargetBody = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('webhook'), name: Name, url: Url }),
    z.strictObject({
      kind: z.literal('letta'),
      name: Name,
      url: Url,
      apiKey: z.string().trim().min(1, { message: 'give the Letta API key' }).max(4096),
      defaultAgentId: z.string().trim().max(AGENT_ID_MAX).optional(),
    }),
  ],
  { message: "kind must be 'webhook' or 'letta'" },
);

const DisableBody = z.strictObject({ reason: z.string().trim().min(1).max(500).optional() });

/** Where the secret of a new webhook target is explained, the one time it is shown. */
const SECRET_HINT =
  'Copy the signing secret now: Calgate shows it only this once. Receivers verify the webhook-signature header with it (Standard Webhooks).';

/** A target as the dashboard shows it: the URL's origin only (its path or query may carry a token), never a secret. */
export function targetView(target: TargetRecord, liveSchedules = 0) {
  return {
    id: target.id,
    kind: target.kind,
    name: target.name,
    origin: originOf(target.url),
    defaultAgentId: target.defaultAgentId,
    disabled: target.disabledAt !== null,
    disabledAt: target.disabledAt,
    disabledReason: target.disabledReason,
    createdAt: target.createdAt,
    /** Active and paused schedules that deliver here: while any do, the target cannot be deleted. */
    liveSchedules,
  };
}

/**
 * The SSRF policy deliveries apply (this process's OUTBOUND_ALLOW_PRIVATE), checked before a
 * target is stored or enabled so that one that could never receive is refused now. Where the URL
 * points is checked before its scheme, so that `http://localhost:…` hears about the setting
 * rather than only about https.
 */
async function refuseUnsafeUrl(url: string, allowPrivate: boolean, action = 'add'): Promise<void> {
  const reachable = await checkTargetUrl(url, { allowPrivate, requireHttps: false });
  const checked = reachable.ok ? parseTargetUrl(url, { allowPrivate }) : reachable;
  if (!checked.ok) {
    // A host that does not resolve is a typo far more often than a passing DNS failure.
    const code = checked.error.code === 'unavailable' ? 'invalid_argument' : checked.error.code;
    throw new CalgateError(code, `Cannot ${action} this target: ${checked.error.message}.`);
  }
}

/** Delivery targets: list, create (a webhook's secret shown once), delete, enable, disable, test. */
export function registerTargetRoutes(app: FastifyInstance, deps: SchedulerApiDeps): void {
  const { targets, schedules } = deps.schedulerRepository;

  async function liveCounts(tenantId: string): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const schedule of await schedules.list(tenantId)) {
      if (schedule.targetId !== null && (schedule.status === 'active' || schedule.status === 'paused')) {
        counts.set(schedule.targetId, (counts.get(schedule.targetId) ?? 0) + 1);
      }
    }
    return counts;
  }

  async function view(tenantId: string, target: TargetRecord) {
    return targetView(target, (await liveCounts(tenantId)).get(target.id) ?? 0);
  }

  app.get('/api/v1/targets', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const [list, counts] = await Promise.all([targets.list(tenantId), liveCounts(tenantId)]);
    return {
      targets: list.map((target) => targetView(target, counts.get(target.id) ?? 0)),
      allowPrivateTargets: deps.allowPrivateTargets,
    };
  });

  app.post('/api/v1/targets', async (request, reply) => {
    const { tenantId } = await deps.guard.session(request);
    const body = parse(NewTargetBody, request.body);
    await refuseUnsafeUrl(body.url, deps.allowPrivateTargets);
    const created = await targets.create(
      tenantId,
      body.kind === 'webhook'
        ? body
        : {
            ...body,
            defaultAgentId:
              body.defaultAgentId === undefined || body.defaultAgentId === '' ? null : body.defaultAgentId,
          },
    );
    reply.status(201);
    return {
      target: targetView(created.target),
      ...(created.secret === null ? {} : { secret: created.secret, secretHint: SECRET_HINT }),
    };
  });

  app.delete('/api/v1/targets/:id', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    await targets.delete(tenantId, id);
    return { deleted: id };
  });

  app.post('/api/v1/targets/:id/enable', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    const target = await targets.get(tenantId, id);
    if (target !== null && target.disabledAt !== null) {
      await refuseUnsafeUrl(target.url, deps.allowPrivateTargets, 'enable');
    }
    return { target: await view(tenantId, await targets.enable(tenantId, id)) };
  });

  app.post('/api/v1/targets/:id/disable', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    const { reason } = parse(DisableBody, request.body);
    const target = await targets.disable(tenantId, id, reason ?? 'Disabled in the dashboard.');
    return { target: await view(tenantId, target) };
  });

  app.post('/api/v1/targets/:id/test', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const { id } = parse(IdParams, request.params);
    const { target, secret } = await targets.openSecret(tenantId, id);
    const result = await testDeliveryTarget(
      {
        id: target.id,
        kind: target.kind,
        url: target.url,
        secret: secret.reveal(),
        defaultAgentId: target.defaultAgentId,
      },
      { allowPrivate: deps.allowPrivateTargets },
    );
    return { test: result };
  });
}
