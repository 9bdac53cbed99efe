import { CalgateError } from '@calgate/core';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from '../../auth/passwords.ts';
import { type ApiDeps, parse } from './deps.ts';

const PasswordBody = z.strictObject({
  currentPassword: z.string().min(1, { message: 'enter your current password' }).max(1024),
  newPassword: z
    .string()
    .min(MIN_PASSWORD_LENGTH, { message: `use a password of at least ${MIN_PASSWORD_LENGTH} characters` })
    .max(1024, { message: 'use a password of at most 1,024 characters' }),
});

/** The signed-in user's sessions: list them, end them all, and change the password. */
export function registerSessionRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { guard } = deps;

  // Any answer that makes a browser drop its session cookie (signing out, signing out
  // everywhere) also ends that session here, so a copy of the cookie stops working with it.
  app.addHook('onSend', async (request, reply, payload) => {
    if (guard.sessions.clears(reply.getHeader('set-cookie'))) {
      await guard.sessions.revoke(request.headers.cookie);
    }
    return payload;
  });

  app.get('/api/v1/sessions', async (request) => {
    const session = await guard.session(request);
    const sessions = await guard.sessions.list(session);
    return {
      sessions: sessions.map((item) => ({
        createdAt: item.createdAt,
        lastSeenAt: item.lastSeenAt,
        expiresAt: item.expiresAt,
        current: item.id === session.id,
      })),
    };
  });

  app.post('/api/v1/sessions/revoke-all', async (request, reply) => {
    const session = await guard.session(request);
    const revoked = await guard.sessions.revokeAll(session, { keepCurrent: false });
    reply.header('set-cookie', guard.sessions.clear());
    return { revoked };
  });

  app.post('/api/v1/account/password', async (request, reply) => {
    const session = await guard.session(request);
    const body = parse(PasswordBody, request.body);
    const decision = await deps.signInLimiter.take(`password:${session.userId}`);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      reply.header('retry-after', String(seconds));
      throw new CalgateError('rate_limited', `Too many password attempts; try again in ${seconds} s.`);
    }
    const user = await deps.users.getWithPassword(session.tenantId, session.userId);
    if (user === null) {
      throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
    }
    if (user.passwordHash === null) {
      throw new CalgateError(
        'precondition_failed',
        'This account has no password yet, so there is none to change.',
      );
    }
    if (!(await verifyPassword(body.currentPassword, user.passwordHash))) {
      throw new CalgateError('invalid_argument', 'currentPassword: this is not your current password');
    }
    if (body.newPassword === body.currentPassword) {
      throw new CalgateError('invalid_argument', 'newPassword: choose a password other than the current one');
    }
    const outcome = await deps.users.changePassword({
      tenantId: session.tenantId,
      userId: session.userId,
      expectedHash: user.passwordHash,
      passwordHash: await hashPassword(body.newPassword),
      keepSessionId: session.id,
    });
    if (!outcome.changed) {
      throw new CalgateError(
        'conflict',
        'The password was changed meanwhile in another session; sign in again with the new one.',
      );
    }
    return { changed: true, otherSessionsSignedOut: outcome.sessionsRevoked };
  });
}
