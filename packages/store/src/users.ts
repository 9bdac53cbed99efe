import { newId } from '@calgate/core';
import type { Prisma } from './db.ts';

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

/** Dashboard users: email and an argon2id PHC string; each belongs to one tenant. */
export class UserRepository {
  readonly #prisma: Prisma;

  constructor(prisma: Prisma) {
    this.#prisma = prisma;
  }

  /**
   * Signs up the first user of this installation: it adopts the oldest tenant without users (the
   * one an embedded first run created) or creates one. Once any user exists, sign-up is closed.
   */
  signUpFirst(input: { email: string; passwordHash: string; tenantName?: string }): Promise<SignUpOutcome> {
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
      const tenant =
        orphan === null
          ? await tx.tenant.create({ data: { id: newId('tnt'), name: input.tenantName ?? 'My Calgate' } })
          : input.tenantName === undefined
            ? await tx.tenant.findUniqueOrThrow({ where: { id: orphan.id } })
            : await tx.tenant.update({ where: { id: orphan.id }, data: { name: input.tenantName } });
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
