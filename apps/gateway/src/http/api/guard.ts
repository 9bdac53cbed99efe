import { createHmac, timingSafeEqual } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { PeopleRepository, Role } from '@calgate/store';
import type { FastifyRequest } from 'fastify';
import { readCookie, SESSION_COOKIE, type Session, type SessionManager } from '../../session.ts';
import { originRefusalMessage } from '../origins.ts';
import { notOwn, policyFor, refusal } from './roles.ts';

/** Who acted on a dashboard request, once the guard let it through (for audit and handlers). */
export interface DashboardUser {
  userId: string;
  tenantId: string;
  role: Role;
  sessionId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by DashboardGuard.session: the signed-in person and their role. */
    dashboardUser?: DashboardUser;
  }
}

/** What the guard reads about people: a user's role and who owns a key. */
export type RoleSource = Pick<PeopleRepository, 'roleOf' | 'keyOwnership'>;

export const CSRF_HEADER = 'x-calgate-csrf';

/** A state-changing method: these need an allowed Origin and, with a session, the CSRF token. */
export function isWrite(request: FastifyRequest): boolean {
  return request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS';
}

/**
 * The one gate of the dashboard API: the session cookie (looked up on every request), and for
 * writes an allowed Origin plus a CSRF token bound to that very session (an HMAC of its token, so
 * a new sign-in gets a new token and a token never outlives its session). Then the person's role
 * against the route's policy (roles.ts), read from the database on every request so a changed
 * role holds at once.
 */
export class DashboardGuard {
  readonly #sessions: SessionManager;
  readonly #allowed: ReadonlySet<string>;
  readonly #csrfKey: Uint8Array;
  readonly #people: RoleSource;

  constructor(
    sessions: SessionManager,
    allowedOrigins: readonly string[],
    csrfKey: Uint8Array,
    people: RoleSource,
  ) {
    this.#sessions = sessions;
    this.#allowed = new Set(allowedOrigins);
    this.#csrfKey = csrfKey;
    this.#people = people;
  }

  get sessions(): SessionManager {
    return this.#sessions;
  }

  /** Refuses a write whose Origin is missing or foreign. */
  checkOrigin(request: FastifyRequest): void {
    const origin = request.headers.origin;
    if (origin === undefined) {
      throw new CalgateError(
        'permission_denied',
        'Cross-site request refused: state-changing requests must come from the Calgate dashboard (this one sent no Origin header).',
      );
    }
    if (!this.#allowed.has(origin)) {
      // The configuration lists PUBLIC_URL's origin first, then ALLOWED_ORIGINS.
      const [publicOrigin = '', ...extra] = this.#allowed;
      throw new CalgateError('permission_denied', originRefusalMessage(origin, publicOrigin, extra));
    }
  }

  /** The CSRF token for the session in a Cookie (or Set-Cookie) header value. */
  csrfFor(cookieHeader: string): string {
    const token = readCookie(cookieHeader, SESSION_COOKIE) ?? '';
    return createHmac('sha256', this.#csrfKey).update(token).digest('base64url');
  }

  /**
   * The signed-in session; for writes also the Origin and the CSRF header; then the role policy.
   * Sets `request.dashboardUser`.
   */
  async session(request: FastifyRequest): Promise<Session> {
    if (isWrite(request)) {
      this.checkOrigin(request);
    }
    const session = await this.#sessions.require(request.headers.cookie);
    if (isWrite(request)) {
      const sent = request.headers[CSRF_HEADER];
      const expected = Buffer.from(this.csrfFor(request.headers.cookie ?? ''));
      const given = Buffer.from(typeof sent === 'string' ? sent : '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new CalgateError(
          'permission_denied',
          `Missing or wrong ${CSRF_HEADER} header: read the token from GET /api/v1/auth/csrf.`,
        );
      }
    }
    const role = await this.#people.roleOf(session.tenantId, session.userId);
    if (role === null) {
      throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
    }
    await this.#authorize(request, session, role);
    request.dashboardUser = {
      userId: session.userId,
      tenantId: session.tenantId,
      role,
      sessionId: session.id,
    };
    return session;
  }

  async #authorize(request: FastifyRequest, session: Session, role: Role): Promise<void> {
    const policy = policyFor(request.method, request.routeOptions.url ?? request.url);
    if (!policy.roles.includes(role)) {
      throw new CalgateError('permission_denied', refusal(role, policy));
    }
    if (policy.own === undefined || role !== 'member') {
      return;
    }
    const id = (request.params as { id?: unknown } | undefined)?.id;
    const owned = typeof id === 'string' ? await this.#people.keyOwnership(session.tenantId, id) : null;
    // An unknown id falls through to the route, which answers 404 as it does for everyone.
    if (owned === null) {
      return;
    }
    const mine = policy.own === 'key' ? owned.createdBy === session.userId : owned.userId === session.userId;
    if (!mine) {
      throw new CalgateError('permission_denied', notOwn(policy));
    }
  }
}
