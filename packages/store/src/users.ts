import { newId } from '@calgate/core';
import type { Prisma } from './db.ts';
import type { Prisma as Generated } from './generated/prisma/client.ts';

type Transaction = Generated.TransactionClient;

export interface UserRecord {
  id: string;
  tenantId: string;
  email: string;
  createdAt: Date;
}

export type SignUpOutcome =
  | { ok: true; user: UserRecord; tenant: { id: string; name: string } }
  | { ok: false; reason: 'closed' };

const USER = { id: true, tenantId: true, email: true, createdAt: true } as const;

/** Serialises first sign-ups across gateway processes, so a fresh install gets one owner. */
const FIRST_USER_LOCK = 0x6367_7573;

/** The name `calgate start` gives the local calendar it creates on an empty database. */
export const FIRST_RUN_CALENDAR = 'Calgate';

/**
 * The calendar `calgate start` created took the machine's zone (UTC on most servers): when the
 * owner names the workspace's zone, that calendar moves to it, as long as it is still the first
 * run's (a local calendar named "Calgate") and holds nothing yet. A calendar with events keeps its
 * zone: its all-day events are stored as midnights in that zone.
 */
async function moveFirstRunCalendar(tx: Transaction, tenantId: string, timeZone: string): Promise<void> {
  const calendar = await tx.calendar.findFirst({
    where: { tenantId, summary: FIRST_RUN_CALENDAR, connection: { provider: 'local' } },
    orderBy: { createdAt: 'asc' },
    select: { id: true, _count: { select: { events: true, bookings: true } } },
  });
  if (calendar === null || calendar._count.events > 0 || calendar._count.bookings > 0) {
    return;
  }
  await tx.calendar.update({ where: { id: calendar.id }, data: { timeZone } });
}

/** Dashboard users: email and an argon2id PHC string; each belongs to one tenant. */
export class UserRepository {
  readonly #prisma: Prisma;

  constructor(prisma: Prisma) {
    this.#prisma = prisma;
  }

  /**
   * Signs up the first user of this installation: it adopts the oldest tenant without users (the
   * one an embedded first run created) or creates one. Once any user exists, sign-up is closed.
   * A `timeZone` becomes the workspace's zone, and the first-run calendar moves to it (see
   * `moveFirstRunCalendar`).
   */
  signUpFirst(input: {
    email: string;
    passwordHash: string;
    tenantName?: string;
    timeZone?: string;
  }): Promise<SignUpOutcome> {
    return this.#prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${FIRST_USER_LOCK})`;
      if ((await tx.user.count()) > 0) {
        return { ok: false, reason: 'closed' } as const;
      }
      const orphan = await tx.tenant.findFirst({
        where: { users: { none: {} } },
        orderBy: { createdAt: 'asc' },
        select: { id: true },
      });
      const timeZone = input.timeZone === undefined ? {} : { timeZone: input.timeZone };
      const tenant =
        orphan === null
          ? await tx.tenant.create({
              data: { id: newId('tnt'), name: input.tenantName ?? 'My Calgate', ...timeZone },
            })
          : await tx.tenant.update({
              where: { id: orphan.id },
              data: { ...(input.tenantName === undefined ? {} : { name: input.tenantName }), ...timeZone },
            });
      if (orphan !== null && input.timeZone !== undefined) {
        await moveFirstRunCalendar(tx, orphan.id, input.timeZone);
      }
      const user = await tx.user.create({
        data: { id: newId('usr'), tenantId: tenant.id, email: input.email, passwordHash: input.passwordHash },
        select: USER,
      });
      return { ok: true, user, tenant: { id: tenant.id, name: tenant.name } } as const;
    });
  }

  /** True once anyone has signed up: sign-up is then closed (checked again under the lock). */
  async hasUsers(): Promise<boolean> {
    return (await this.#prisma.user.findFirst({ select: { id: true } })) !== null;
  }

  /** The user and password hash for an email (already normalised), or null. */
  findByEmail(email: string): Promise<(UserRecord & { passwordHash: string | null }) | null> {
    return this.#prisma.user.findUnique({ where: { email }, select: { ...USER, passwordHash: true } });
  }

  /** A user of this tenant, or null. */
  get(tenantId: string, userId: string): Promise<UserRecord | null> {
    return this.#prisma.user.findFirst({ where: { id: userId, tenantId }, select: USER });
  }

  /** A user of this tenant with its password hash (null: no password set), or null. */
  getWithPassword(
    tenantId: string,
    userId: string,
  ): Promise<(UserRecord & { passwordHash: string | null }) | null> {
    return this.#prisma.user.findFirst({
      where: { id: userId, tenantId },
      select: { ...USER, passwordHash: true },
    });
  }

  /**
   * Replaces a password that is still `expectedHash` and, in the same transaction, ends every
   * other session of the user (all but the session with hex id `keepSessionId`). Returns false,
   * changing nothing, when the password was changed meanwhile.
   */
  changePassword(input: {
    tenantId: string;
    userId: string;
    expectedHash: string;
    passwordHash: string;
    keepSessionId: string;
  }): Promise<{ changed: false } | { changed: true; sessionsRevoked: number }> {
    return this.#prisma.$transaction(async (tx) => {
      const { count } = await tx.user.updateMany({
        where: { id: input.userId, tenantId: input.tenantId, passwordHash: input.expectedHash },
        data: { passwordHash: input.passwordHash },
      });
      if (count === 0) {
        return { changed: false } as const;
      }
      const revoked = await tx.session.updateMany({
        where: {
          userId: input.userId,
          tenantId: input.tenantId,
          revokedAt: null,
          NOT: { id: new Uint8Array(Buffer.from(input.keepSessionId, 'hex')) },
        },
        data: { revokedAt: new Date() },
      });
      return { changed: true, sessionsRevoked: revoked.count } as const;
    });
  }
}
