import { CalgateError } from '@calgate/core';
import { type LinkProblem, PeopleRepository, ROLES, type Role } from '@calgate/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../../auth/passwords.ts';
import { invitationMail } from '../../mail.ts';
import { type ApiDeps, parse } from './deps.ts';

const Email = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ message: 'enter a valid email address, e.g. ann@example.com' }).max(254));

const RoleField = z.enum(ROLES, { message: `role must be one of ${ROLES.join(', ')}` });

const Password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, { message: `use a password of at least ${MIN_PASSWORD_LENGTH} characters` })
  .max(1024, { message: 'use a password of at most 1,024 characters' });

const Token = z.string().min(1, { message: 'the link has no token' }).max(200);

const InviteBody = z.strictObject({ email: Email, role: RoleField });
const RoleBody = z.strictObject({ role: RoleField });
const IdParams = z.strictObject({ id: z.string().min(1).max(64) });
const TokenQuery = z.strictObject({ token: Token });
const TokenBody = z.strictObject({ token: Token, password: Password });

const LINK_PROBLEMS: Record<LinkProblem | 'email_taken', (what: string) => string> = {
  unknown: (what) => `This ${what} link is not valid: check that it was copied whole.`,
  expired: (what) => `This ${what} link has expired: ask for a new one.`,
  used: (what) => `This ${what} link was already used: sign in instead, or ask for a new one.`,
  revoked: (what) => `This ${what} link was withdrawn: ask for a new one.`,
  email_taken: () => 'Someone already signs in with this email address: sign in instead.',
};

function linkError(problem: LinkProblem | 'email_taken', what: string): CalgateError {
  return new CalgateError('invalid_argument', LINK_PROBLEMS[problem](what));
}

/** Refuses what admins may not do to owners; owners may do everything. */
function checkOwnerRules(actor: Role, target: Role | null, newRole: Role | null): void {
  if (actor === 'owner') {
    return;
  }
  if (target === 'owner') {
    throw new CalgateError('permission_denied', 'Only owners can change or remove an owner.');
  }
  if (newRole === 'owner') {
    throw new CalgateError('permission_denied', 'Only owners can make someone an owner.');
  }
}

function actorOf(request: FastifyRequest): { userId: string; tenantId: string; role: Role } {
  const user = request.dashboardUser;
  if (user === undefined) {
    throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
  }
  return user;
}

/**
 * Members, invitations and password-reset links. Removing a member revokes the API keys they
 * created and the apps they connected, and ends their sessions: access follows the person out.
 */
export function registerPeopleRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { guard } = deps;
  const people = new PeopleRepository(deps.db);

  /**
   * The public link endpoints share the sign-in limiter, per client address and link. Tokens are
   * 256-bit random, so guessing is hopeless; the limit caps password hashing, which only a
   * working link reaches (bad links are refused by a lookup first).
   */
  async function limit(
    request: FastifyRequest,
    reply: FastifyReply,
    what: string,
    token: string,
  ): Promise<void> {
    const decision = await deps.signInLimiter.take(`${what}:${request.ip}:${token.slice(0, 16)}`);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      reply.header('retry-after', String(seconds));
      throw new CalgateError('rate_limited', `Too many attempts; try again in ${seconds} s.`);
    }
  }

  async function signIn(reply: FastifyReply, userId: string, tenantId: string) {
    const cookie = await guard.sessions.issue({ userId, tenantId });
    reply.header('set-cookie', cookie);
    const [user, tenant, role] = await Promise.all([
      deps.users.get(tenantId, userId),
      deps.tenancy.getTenant(tenantId),
      people.roleOf(tenantId, userId),
    ]);
    return {
      user: { id: userId, email: user?.email, role },
      tenant: { id: tenantId, name: tenant?.name },
      csrfToken: guard.csrfFor(cookie),
    };
  }

  app.get('/api/v1/members', async (request) => {
    const session = await guard.session(request);
    const [members, invitations] = await Promise.all([
      people.listMembers(session.tenantId),
      people.pendingInvitations(session.tenantId),
    ]);
    return { members, invitations, you: { id: session.userId, role: actorOf(request).role } };
  });

  app.post('/api/v1/invitations', async (request, reply) => {
    const session = await guard.session(request);
    const body = parse(InviteBody, request.body);
    checkOwnerRules(actorOf(request).role, null, body.role);
    const created = await people.invite({
      tenantId: session.tenantId,
      email: body.email,
      role: body.role,
      invitedBy: session.userId,
    });
    if (!created.ok) {
      throw new CalgateError(
        'conflict',
        `${body.email} already has a Calgate sign-in; they cannot be invited again.`,
      );
    }
    const link = `${deps.publicUrl}/invite?token=${created.token}`;
    let sent = false;
    let mailError: string | undefined;
    if (deps.mailer !== undefined) {
      const tenant = await deps.tenancy.getTenant(session.tenantId);
      try {
        await deps.mailer.send(
          invitationMail({ to: body.email, tenantName: tenant?.name ?? 'Calgate', role: body.role, link }),
        );
        sent = true;
      } catch (error) {
        mailError = error instanceof Error ? error.message : String(error);
        request.log.warn({ invitationId: created.invitation.id, err: mailError }, 'invitation mail failed');
      }
    }
    reply.status(201).header('cache-control', 'no-store');
    return { invitation: created.invitation, link, sent, ...(mailError === undefined ? {} : { mailError }) };
  });

  app.post('/api/v1/invitations/:id/revoke', async (request) => {
    const session = await guard.session(request);
    const { id } = parse(IdParams, request.params);
    if (!(await people.revokeInvitation(session.tenantId, id))) {
      throw new CalgateError('not_found', `No pending invitation ${id} in this workspace.`);
    }
    return { revoked: true };
  });

  app.patch('/api/v1/members/:id', async (request) => {
    const session = await guard.session(request);
    const { id } = parse(IdParams, request.params);
    const { role } = parse(RoleBody, request.body);
    checkOwnerRules(actorOf(request).role, await people.roleOf(session.tenantId, id), role);
    const outcome = await people.setRole(session.tenantId, id, role);
    if (outcome === 'not_found') {
      throw new CalgateError('not_found', `No member ${id} in this workspace.`);
    }
    if (outcome === 'last_owner') {
      throw new CalgateError(
        'permission_denied',
        'This is the last owner of the workspace: make someone else an owner first.',
      );
    }
    return { member: (await people.listMembers(session.tenantId)).find((member) => member.id === id) };
  });

  app.delete('/api/v1/members/:id', async (request) => {
    const session = await guard.session(request);
    const { id } = parse(IdParams, request.params);
    checkOwnerRules(actorOf(request).role, await people.roleOf(session.tenantId, id), null);
    const result = await people.removeMember(session.tenantId, id);
    if (result.outcome === 'not_found') {
      throw new CalgateError('not_found', `No member ${id} in this workspace.`);
    }
    if (result.outcome !== 'ok') {
      throw new CalgateError(
        'permission_denied',
        'This is the last owner of the workspace and cannot be removed: make someone else an owner first.',
      );
    }
    deps.invalidateKeys(session.tenantId);
    return { removed: true, keysRevoked: result.keysRevoked };
  });

  app.get('/api/v1/invitations/lookup', async (request, reply) => {
    const { token } = parse(TokenQuery, request.query);
    await limit(request, reply, 'invite-lookup', token);
    const found = await people.lookupInvitation(token);
    if (!found.ok) {
      throw linkError(found.problem, 'invitation');
    }
    reply.header('cache-control', 'no-store');
    const { email, role, expiresAt, tenantName } = found.value;
    return { email, role, expiresAt, tenant: { name: tenantName } };
  });

  app.post('/api/v1/invitations/accept', async (request, reply) => {
    guard.checkOrigin(request);
    const body = parse(TokenBody, request.body);
    await limit(request, reply, 'invite-accept', body.token);
    const found = await people.lookupInvitation(body.token);
    if (!found.ok) {
      throw linkError(found.problem, 'invitation');
    }
    const accepted = await people.acceptInvitation(body.token, await hashPassword(body.password));
    if (!accepted.ok) {
      throw linkError(accepted.problem, 'invitation');
    }
    reply.status(201);
    return signIn(reply, accepted.value.userId, accepted.value.tenantId);
  });

  app.post('/api/v1/auth/reset', async (request, reply) => {
    guard.checkOrigin(request);
    const body = parse(TokenBody, request.body);
    await limit(request, reply, 'reset', body.token);
    const problem = await people.checkPasswordReset(body.token);
    if (problem !== null) {
      throw linkError(problem, 'password reset');
    }
    const reset = await people.resetPassword(body.token, await hashPassword(body.password));
    if (!reset.ok) {
      throw linkError(reset.problem, 'password reset');
    }
    return signIn(reply, reset.value.userId, reset.value.tenantId);
  });
}
