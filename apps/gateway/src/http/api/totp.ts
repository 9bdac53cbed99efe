import { CalgateError } from '@calgate/core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { verifyPassword } from '../../auth/passwords.ts';
import { wrongCode } from '../../auth/two-step.ts';
import { type ApiDeps, parse } from './deps.ts';
import { clientOf } from './sessions.ts';

/** A 6-digit code from the app, or a recovery code (e.g. `K7QM-2XRD-PW4A`). */
const Code = z
  .string()
  .trim()
  .min(1, { message: 'enter the 6-digit code from your authenticator app, or a recovery code' })
  .max(32, { message: 'a code is at most 32 characters' });

const ConfirmBody = z.strictObject({ code: Code });
const DisableBody = z.strictObject({
  password: z.string().min(1, { message: 'enter your password' }).max(1024),
  code: Code,
});
const SignInTotpBody = z.strictObject({
  challenge: z.string().min(1, { message: 'start with POST /api/v1/auth/signin' }).max(1024),
  code: Code,
});

/**
 * Two-step sign-in: the account's set-up, confirmation and switching off, and the second step
 * of a sign-in (`POST /api/v1/auth/signin/totp`) that follows a `totpRequired` answer.
 */
export function registerTotpRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { guard, twoStep } = deps;

  /** Spends one attempt of the sign-in limiter; a 429 naming the wait when none is left. */
  async function limit(reply: FastifyReply, key: string): Promise<void> {
    const decision = await deps.signInLimiter.take(key);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      reply.header('retry-after', String(seconds));
      throw new CalgateError('rate_limited', `Too many code attempts; try again in ${seconds} s.`);
    }
  }

  app.get('/api/v1/account/totp', async (request) => {
    const session = await guard.session(request);
    return twoStep.status(session);
  });

  app.post('/api/v1/account/totp/setup', async (request) => {
    const session = await guard.session(request);
    const user = await deps.users.get(session.tenantId, session.userId);
    if (user === null) {
      throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
    }
    return twoStep.setup(session, user.email);
  });

  app.post('/api/v1/account/totp/confirm', async (request, reply) => {
    const session = await guard.session(request);
    const body = parse(ConfirmBody, request.body);
    await limit(reply, `totp-account:${session.userId}`);
    return { enabled: true, recoveryCodes: await twoStep.confirm(session, body.code) };
  });

  app.post('/api/v1/account/totp/disable', async (request, reply) => {
    const session = await guard.session(request);
    const body = parse(DisableBody, request.body);
    await limit(reply, `totp-account:${session.userId}`);
    const user = await deps.users.getWithPassword(session.tenantId, session.userId);
    if (user === null) {
      throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
    }
    if (!(await twoStep.required(session))) {
      throw new CalgateError('precondition_failed', 'Two-step sign-in is not on for this account.');
    }
    if (user.passwordHash === null || !(await verifyPassword(body.password, user.passwordHash))) {
      throw new CalgateError('invalid_argument', 'password: this is not your current password');
    }
    if ((await twoStep.verify(session, body.code)) === null) {
      throw wrongCode();
    }
    await twoStep.disable(session);
    return { enabled: false };
  });

  app.post('/api/v1/auth/signin/totp', async (request, reply) => {
    guard.checkOrigin(request);
    const body = parse(SignInTotpBody, request.body);
    const subject = twoStep.readChallenge(body.challenge);
    if (subject === null) {
      throw new CalgateError(
        'unauthenticated',
        'This sign-in has expired or is not valid; sign in with your email and password again.',
      );
    }
    await limit(reply, `totp:${subject.userId}`);
    const [user, tenant] = await Promise.all([
      deps.users.get(subject.tenantId, subject.userId),
      deps.tenancy.getTenant(subject.tenantId),
    ]);
    if (user === null) {
      throw new CalgateError('unauthenticated', 'Sign in with your email and password again.');
    }
    const factor = await twoStep.verify(subject, body.code);
    if (factor === null) {
      throw new CalgateError('unauthenticated', 'Wrong code: it is wrong, expired or already used.');
    }
    const cookie = await guard.sessions.issue(subject, clientOf(request));
    reply.header('set-cookie', cookie);
    return {
      user: { id: user.id, email: user.email },
      tenant: { id: subject.tenantId, name: tenant?.name },
      csrfToken: guard.csrfFor(cookie),
      ...(factor.kind === 'recovery' ? { recoveryCodesLeft: factor.left } : {}),
    };
  });
}
