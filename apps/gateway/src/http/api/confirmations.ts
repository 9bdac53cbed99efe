import { ConfirmationRepository } from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type ApiDeps, parse } from './deps.ts';

const Params = z.strictObject({ id: z.string().min(1).max(64) });

function view(row: Awaited<ReturnType<ConfirmationRepository['pending']>>[number]) {
  return {
    id: row.id,
    keyId: row.keyId,
    keyName: row.key.name,
    tool: row.tool,
    calendarIds: row.calendarIds,
    action: row.action,
    preceded: row.preceded,
    status: row.status,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt,
  };
}

/**
 * Risky calls waiting for a person (see @calgate/tools guard/confirm.ts): list, approve, decline.
 * Only a signed-in person gets here, never an agent's key, so an agent cannot approve itself.
 */
export function registerConfirmationRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const confirmations = new ConfirmationRepository(deps.db.prisma);
  app.get('/api/v1/confirmations', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    return { confirmations: (await confirmations.pending(tenantId)).map(view) };
  });
  for (const [verb, approve] of [
    ['approve', true],
    ['decline', false],
  ] as const) {
    app.post(`/api/v1/confirmations/:id/${verb}`, async (request) => {
      const { tenantId, userId } = await deps.guard.session(request);
      const { id } = parse(Params, request.params);
      return { confirmation: view(await confirmations.decide(tenantId, id, userId, approve)) };
    });
  }
}
