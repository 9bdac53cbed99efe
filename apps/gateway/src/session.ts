import { CalgateError } from '@calgate/core';
import type { SessionClient, SessionRecord, SessionRepository } from '@calgate/store';

/** The user a session is for. */
export interface SessionUser {
  userId: string;
  tenantId: string;
}

/** Who is signed in to the dashboard, and by which session (`id`: hex of the token's hash). */
export interface Session extends SessionUser {
  id: string;
}

export const SESSION_COOKIE = 'calgate_session';

/** How long a sign-in lasts when the SessionManager is given no `ttlSeconds`. */
export const DEFAULT_SESSION_TTL_SECONDS = 12 * 60 * 60;

/**
 * One cookie's value from a Cookie header, as sent. Values are not percent-decoded: Calgate's
 * cookies are base64url, so a value that would need decoding is not one of them, and a broken
 * escape such as `%E0%A4%A` is simply a value that matches nothing.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) {
    return undefined;
  }
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      return part.slice(index + 1).trim();
    }
  }
  return undefined;
}

/**
 * Dashboard sessions kept in Postgres: the HttpOnly, SameSite=Lax cookie (Lax, so the top-level
 * redirect back from Google's consent page still carries it; Secure over https) holds a random
 * token, and every request looks its session up, so signing out ends it everywhere at once.
 * A cookie that is missing, malformed or unknown is no session.
 */
export class SessionManager {
  readonly #store: SessionRepository;
  readonly #secure: boolean;
  readonly #ttlSeconds: number;

  constructor(store: SessionRepository, options: { secure: boolean; ttlSeconds?: number }) {
    this.#store = store;
    this.#secure = options.secure;
    this.#ttlSeconds = options.ttlSeconds ?? DEFAULT_SESSION_TTL_SECONDS;
  }

  /**
   * Starts a session for the user; returns the Set-Cookie value that carries it. `client`
   * (User-Agent, address) is kept for the sessions list.
   */
  async issue(user: SessionUser, client: SessionClient = {}): Promise<string> {
    const { token } = await this.#store.create(user, this.#ttlSeconds * 1000, client);
    return this.#cookie(token, this.#ttlSeconds);
  }

  /** A Set-Cookie value that makes the browser drop its session cookie. */
  clear(): string {
    return this.#cookie('', 0);
  }

  /** True when a Set-Cookie header value (or list) drops the session cookie. */
  clears(setCookie: unknown): boolean {
    const values = Array.isArray(setCookie) ? setCookie : [setCookie];
    return values.some((value) => value === this.clear());
  }

  /** The live session in a Cookie header, or null. */
  async read(cookieHeader: string | undefined): Promise<Session | null> {
    const token = readCookie(cookieHeader, SESSION_COOKIE);
    if (token === undefined) {
      return null;
    }
    const found = await this.#store.find(token);
    return found === null ? null : sessionOf(found);
  }

  async require(cookieHeader: string | undefined): Promise<Session> {
    const session = await this.read(cookieHeader);
    if (session === null) {
      throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
    }
    return session;
  }

  /** Ends the session in a Cookie header, if any. */
  async revoke(cookieHeader: string | undefined): Promise<void> {
    const token = readCookie(cookieHeader, SESSION_COOKIE);
    if (token !== undefined) {
      await this.#store.revoke(token);
    }
  }

  /** Ends every session of the session's user (but `session` itself when `keepCurrent`). */
  revokeAll(session: Session, options: { keepCurrent: boolean }): Promise<number> {
    return this.#store.revokeAll(
      session.tenantId,
      session.userId,
      options.keepCurrent ? { exceptId: session.id } : {},
    );
  }

  /** Ends one session of the session's user by id; false when the user has no such session. */
  revokeById(session: Session, id: string): Promise<boolean> {
    return this.#store.revokeById(session.tenantId, session.userId, id);
  }

  /** The live sessions of the session's user, newest first. */
  list(session: Session): Promise<SessionRecord[]> {
    return this.#store.list(session.tenantId, session.userId);
  }

  #cookie(token: string, maxAge: number): string {
    return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${this.#secure ? '; Secure' : ''}`;
  }
}

function sessionOf(record: SessionRecord): Session {
  return { id: record.id, userId: record.userId, tenantId: record.tenantId };
}
