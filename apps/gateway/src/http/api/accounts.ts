import { CalgateError } from '@calgate/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  hashPassword,
  MIN_PASSWORD_LENGTH,
  verifyAgainstDummy,
  verifyPassword,
} from '../../auth/passwords.ts';
import { type ApiDeps, parse } from './deps.ts';
import { clientOf } from './sessions.ts';
import { canonicalTimeZone } from './workspace.ts';

const Email = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ message: 'enter a valid email address, e.g. ann@example.com' }).max(254));

const Password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, { message: `use a password of at least ${MIN_PASSWORD_LENGTH} characters` })
  .max(1024, { message: 'use a password of at most 1,024 characters' });

const SignUpBody = z.strictObject({
  email: Email,
  password: Password,
  tenantName: z.string().trim().min(1).max(100).optional(),
  /** The workspace's zone (the first-run form sends the browser's); the first-run calendar takes it. */
  timeZone: z.string().trim().min(1).max(64).optional(),
});

const SignInBody = z.strictObject({
  email: Email,
  password: z.string().min(1, { message: 'enter your password' }).max(1024),
});

const INVALID_CREDENTIALS = 'Wrong email or password.';

function signUpClosed(): CalgateError {
  return new CalgateError(
    'permission_denied',
    'Sign-up is closed: this Calgate already has an owner. To join, ask an owner or admin for an invitation link.',
  );
}

/** Sign-up (first user of an installation), sign-in, sign-out, the current user and CSRF token. */
export function registerAccountRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { guard } = deps;

  async function signIn(
    request: FastifyRequest,
    reply: FastifyReply,
    userId: string,
    tenantId: string,
  ): Promise<string> {
    const cookie = await guard.sessions.issue({ userId, tenantId }, clientOf(request));
    reply.header('set-cookie', cookie);
    return guard.csrfFor(cookie);
  }

  app.post('/api/v1/auth/signup', async (request, reply) => {
    guard.checkOrigin(request);
    const body = parse(SignUpBody, request.body);
    const timeZone = body.timeZone === undefined ? undefined : canonicalTimeZone('timeZone', body.timeZone);
    // Closed installs answer before any hashing, so sign-up attempts cost no argon2 work.
    if (await deps.users.hasUsers()) {
      throw signUpClosed();
    }
    const passwordHash = await hashPassword(body.password);
    const outcome = await deps.users.signUpFirst({
      email: body.email,
      passwordHash,
      ...(body.tenantName === undefined ? {} : { tenantName: body.tenantName }),
      ...(timeZone === undefined ? {} : { timeZone }),
    });
    if (!outcome.ok) {
      throw signUpClosed();
    }
    // The first-run key now answers in the workspace's zone, on its next call.
    deps.invalidateKeys(outcome.tenant.id);
    const csrfToken = await signIn(request, reply, outcome.user.id, outcome.tenant.id);
    reply.status(201);
    return { user: { id: outcome.user.id, email: outcome.user.email }, tenant: outcome.tenant, csrfToken };
  });

  // Whether this install has no one yet: the dashboard then opens on the create-owner form.
  app.get('/api/v1/auth/first-run', async () => ({ firstRun: !(await deps.users.hasUsers()) }));

  app.post('/api/v1/auth/signin', async (request, reply) => {
    guard.checkOrigin(request);
    const body = parse(SignInBody, request.body);
    const decision = await deps.signInLimiter.take(`signin:${body.email}:${request.ip}`);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      reply.header('retry-after', String(seconds));
      throw new CalgateError('rate_limited', `Too many sign-in attempts; try again in ${seconds} s.`);
    }
    const user = await deps.users.findByEmail(body.email);
    const valid =
      user === null || user.passwordHash === null
        ? await verifyAgainstDummy(body.password)
        : await verifyPassword(body.password, user.passwordHash);
    if (user === null || !valid) {
      throw new CalgateError('unauthenticated', INVALID_CREDENTIALS);
    }
    // With two-step sign-in on, the password only earns a short-lived challenge: no session
    // exists until POST /api/v1/auth/signin/totp accepts a code with it.
    const subject = { userId: user.id, tenantId: user.tenantId };
    if (await deps.twoStep.required(subject)) {
      return { totpRequired: true, challenge: deps.twoStep.challenge(subject) };
    }
    const tenant = await deps.tenancy.getTenant(user.tenantId);
    const csrfToken = await signIn(request, reply, user.id, user.tenantId);
    return {
      user: { id: user.id, email: user.email },
      tenant: { id: user.tenantId, name: tenant?.name },
      csrfToken,
    };
  });

  app.post('/api/v1/auth/signout', async (request, reply) => {
    guard.checkOrigin(request);
    if ((await guard.sessions.read(request.headers.cookie)) !== null) {
      await guard.session(request);
    }
    reply.header('set-cookie', guard.sessions.clear());
    return { signedOut: true };
  });

  app.get('/api/v1/auth/me', async (request) => {
    const session = await guard.session(request);
    const [user, tenant] = await Promise.all([
      deps.users.get(session.tenantId, session.userId),
      deps.tenancy.getTenant(session.tenantId),
    ]);
    if (user === null || tenant === null) {
      throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
    }
    return {
      user: { id: user.id, email: user.email, role: request.dashboardUser?.role },
      tenant: { id: tenant.id, name: tenant.name, timeZone: tenant.timeZone },
    };
  });

  app.get('/api/v1/auth/csrf', async (request: FastifyRequest) => {
    await guard.session(request);
    return { csrfToken: guard.csrfFor(request.headers.cookie ?? ''), header: 'x-calgate-csrf' };
  });
}
