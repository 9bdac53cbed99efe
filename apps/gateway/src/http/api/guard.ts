import { createHmac, timingSafeEqual } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { FastifyRequest } from 'fastify';
import { readCookie, SESSION_COOKIE, type Session, type SessionManager } from '../../session.ts';

export const CSRF_HEADER = 'x-calgate-csrf';

/** A state-changing method: these need an allowed Origin and, with a session, the CSRF token. */
export function isWrite(request: FastifyRequest): boolean {
  return request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS';
}

/**
 * The one gate of the dashboard API: the session cookie (looked up on every request), and for
 * writes an allowed Origin plus a CSRF token bound to that very session (an HMAC of its token, so
 * a new sign-in gets a new token and a token never outlives its session).
 */
export class DashboardGuard {
  readonly #sessions: SessionManager;
  readonly #allowed: ReadonlySet<string>;
  readonly #csrfKey: Uint8Array;

  constructor(sessions: SessionManager, allowedOrigins: readonly string[], csrfKey: Uint8Array) {
    this.#sessions = sessions;
    this.#allowed = new Set(allowedOrigins);
    this.#csrfKey = csrfKey;
  }

  get sessions(): SessionManager {
    return this.#sessions;
  }

  /** Refuses a write whose Origin is missing or foreign. */
  checkOrigin(request: FastifyRequest): void {
    const origin = request.headers.origin;
    if (origin === undefined || !this.#allowed.has(origin)) {
      throw new CalgateError(
        'permission_denied',
        'Cross-site request refused: state-changing requests must come from the Calgate dashboard.',
      );
    }
  }

  /** The CSRF token for the session in a Cookie (or Set-Cookie) header value. */
  csrfFor(cookieHeader: string): string {
    const token = readCookie(cookieHeader, SESSION_COOKIE) ?? '';
    return createHmac('sha256', this.#csrfKey).update(token).digest('base64url');
  }

  /** The signed-in session; for writes also the Origin and the CSRF header. */
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
    return session;
  }
}
