import { CalgateError, newId } from '@calgate/core';
import type { Prisma } from './db.ts';

/** How long a person has to approve a refused call in the dashboard, and the agent to repeat it. */
export const CONFIRMATION_TTL_MS = 30 * 60_000;

/** What presenting a confirmation id found (as @calgate/tools' ConfirmationUse). */
export type ConfirmationUseResult = 'ok' | 'pending' | 'declined' | 'used' | 'mismatch' | 'unknown';

export interface NewConfirmation {
  tool: string;
  argsHash: string;
  calendarIds: string[];
  /** What the call will do; ids and addresses only, never calendar text. */
  action: string;
  /** What the agent was shown before (event ids and reasons), never the withheld text. */
  preceded: string[];
}

const LISTED = {
  id: true,
  keyId: true,
  tool: true,
  calendarIds: true,
  action: true,
  preceded: true,
  status: true,
  createdAt: true,
  expiresAt: true,
  decidedBy: true,
  decidedAt: true,
  usedAt: true,
  key: { select: { name: true } },
} as const;

/**
 * Risky calls waiting for a person's confirmation in the dashboard. A confirmation belongs to one
 * key, one tool and one argument hash; the agent presents its id once after a person approved it.
 */
export class ConfirmationRepository {
  readonly #prisma: Prisma;

  constructor(prisma: Prisma) {
    this.#prisma = prisma;
  }

  async create(
    tenantId: string,
    keyId: string,
    input: NewConfirmation,
    now = new Date(),
  ): Promise<{ id: string; expiresAt: Date }> {
    const expiresAt = new Date(now.getTime() + CONFIRMATION_TTL_MS);
    const row = await this.#prisma.actionConfirmation.create({
      data: {
        id: newId('cnf'),
        tenantId,
        keyId,
        tool: input.tool,
        argsHash: input.argsHash,
        calendarIds: input.calendarIds,
        action: input.action.slice(0, 1000),
        preceded: input.preceded.map((line) => line.slice(0, 500)).slice(0, 10),
        createdAt: now,
        expiresAt,
      },
      select: { id: true, expiresAt: true },
    });
    return row;
  }

  /** Consumes an approved, unexpired confirmation of this key for exactly this call: 'ok' at most once. */
  async use(
    tenantId: string,
    keyId: string,
    id: string,
    tool: string,
    argsHash: string,
    now = new Date(),
  ): Promise<ConfirmationUseResult> {
    const { count } = await this.#prisma.actionConfirmation.updateMany({
      where: { id, tenantId, keyId, tool, argsHash, status: 'approved', expiresAt: { gt: now } },
      data: { status: 'used', usedAt: now },
    });
    if (count === 1) {
      return 'ok';
    }
    const row = await this.#prisma.actionConfirmation.findFirst({
      where: { id, tenantId, keyId },
      select: { tool: true, argsHash: true, status: true, expiresAt: true },
    });
    if (row === null || (row.expiresAt <= now && row.status !== 'used')) {
      return 'unknown';
    }
    if (row.tool !== tool || row.argsHash !== argsHash) {
      return 'mismatch';
    }
    return row.status === 'pending' || row.status === 'declined' || row.status === 'used'
      ? row.status
      : 'unknown';
  }

  /** The tenant's confirmations still waiting for a person, newest first. */
  pending(tenantId: string, now = new Date()) {
    return this.#prisma.actionConfirmation.findMany({
      where: { tenantId, status: 'pending', expiresAt: { gt: now } },
      orderBy: { createdAt: 'desc' },
      take: 100,
      select: LISTED,
    });
  }

  /** A person approves or declines a waiting confirmation; refused once decided or expired. */
  async decide(tenantId: string, id: string, userId: string, approve: boolean, now = new Date()) {
    const { count } = await this.#prisma.actionConfirmation.updateMany({
      where: { id, tenantId, status: 'pending', expiresAt: { gt: now } },
      data: { status: approve ? 'approved' : 'declined', decidedBy: userId, decidedAt: now },
    });
    const row = await this.#prisma.actionConfirmation.findFirst({ where: { id, tenantId }, select: LISTED });
    if (row === null) {
      throw new CalgateError('not_found', `No confirmation ${id} in this workspace.`);
    }
    if (count === 0) {
      const state = row.status === 'pending' ? 'expired' : `already ${row.status}`;
      throw new CalgateError(
        'conflict',
        `Confirmation ${id} is ${state}; the agent can repeat its call without it to ask again.`,
      );
    }
    return row;
  }
}
