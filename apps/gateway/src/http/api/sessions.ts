import { CalgateError } from '@calgate/core';
import type { SessionClient } from '@calgate/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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

const SessionParams = z.strictObject({
  id: z
    .string()
    .regex(/^[0-9a-f]{64}$/, { message: 'a session id is 64 hex characters, from GET /api/v1/sessions' }),
});

/** Where a sign-in comes from, kept with its session: the User-Agent header and request.ip. */
export function clientOf(request: FastifyRequest): SessionClient {
  const userAgent = request.headers['user-agent'];
  return { ...(userAgent === undefined ? {} : { userAgent }), ip: request.ip };
}

const BROWSERS: readonly [RegExp, string][] = [
  [/Edg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/OPR\/(\d+)/, 'Opera'],
  [/Firefox\/(\d+)/, 'Firefox'],
  [/FxiOS\/(\d+)/, 'Firefox'],
  [/CriOS\/(\d+)/, 'Chrome'],
  [/Chrom(?:e|ium)\/(\d+)/, 'Chrome'],
  [/Version\/(\d+)[.\d]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  [/^curl\/(\d+)/, 'curl'],
];

const SYSTEMS: readonly [RegExp, string][] = [
  [/Windows/, 'Windows'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Android/, 'Android'],
  [/CrOS/, 'ChromeOS'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/Linux/, 'Linux'],
];

/**
 * A User-Agent header shortened to browser and system, e.g. "Firefox 133 on Linux"; the header's
 * first 40 characters when neither is recognised, and null when there was none.
 */
export function describeUserAgent(userAgent: string | null): string | null {
  if (userAgent === null || userAgent.trim() === '') {
    return null;
  }
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent));
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent));
  if (browser === undefined && system === undefined) {
    return userAgent.slice(0, 40);
  }
  const version = browser === undefined ? undefined : browser[0].exec(userAgent)?.[1];
  const name =
    browser === undefined ? 'Unknown browser' : `${browser[1]}${version === undefined ? '' : ` ${version}`}`;
  return system === undefined ? name : `${name} on ${system[1]}`;
}

/**
 * The signed-in user's sessions: list them, end one or all of them, and change the password.
 */
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
        id: item.id,
        createdAt: item.createdAt,
        lastSeenAt: item.lastSeenAt,
        expiresAt: item.expiresAt,
        client: describeUserAgent(item.userAgent),
        ip: item.ip,
        current: item.id === session.id,
      })),
    };
  });

  // Only the user's own sessions: another person's id ends nothing and reads as unknown.
  app.post('/api/v1/sessions/:id/revoke', async (request, reply) => {
    const session = await guard.session(request);
    const { id } = parse(SessionParams, request.params);
    if (!(await guard.sessions.revokeById(session, id))) {
      throw new CalgateError('not_found', `You have no live session ${id}.`);
    }
    const current = id === session.id;
    if (current) {
      reply.header('set-cookie', guard.sessions.clear());
    }
    return { revoked: true, current };
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
