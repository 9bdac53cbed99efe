import { randomUUID } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import { jwtVerify, SignJWT } from 'jose';

/** Who is signed in to the dashboard. */
export interface Session {
  userId: string;
  tenantId: string;
}

export const SESSION_COOKIE = 'calgate_session';

/** Reads one cookie from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) {
    return undefined;
  }
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      return decodeURIComponent(part.slice(index + 1).trim());
    }
  }
  return undefined;
}

/**
 * Dashboard sessions as HS256-signed JWTs in an HttpOnly, SameSite=Lax cookie (Lax, so the
 * top-level redirect back from Google's consent page still carries it), Secure over https.
 */
export class SessionManager {
  readonly #key: Uint8Array;
  readonly #secure: boolean;
  readonly #ttlSeconds: number;

  constructor(key: Uint8Array, options: { secure: boolean; ttlSeconds?: number }) {
    this.#key = key;
    this.#secure = options.secure;
    this.#ttlSeconds = options.ttlSeconds ?? 12 * 60 * 60;
  }

  /** A Set-Cookie value that signs the user in. */
  async issue(session: Session): Promise<string> {
    const token = await new SignJWT({ tid: session.tenantId })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(session.userId)
      // A unique id per sign-in: two sessions in one second differ, and so do their CSRF tokens.
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime(`${this.#ttlSeconds}s`)
      .setAudience('calgate-dashboard')
      .sign(this.#key);
    return this.#cookie(token, this.#ttlSeconds);
  }

  /** A Set-Cookie value that signs out. */
  clear(): string {
    return this.#cookie('', 0);
  }

  /** The session in a Cookie header, or null when absent, forged or expired. */
  async read(cookieHeader: string | undefined): Promise<Session | null> {
    const token = readCookie(cookieHeader, SESSION_COOKIE);
    if (token === undefined || token === '') {
      return null;
    }
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: ['HS256'],
        audience: 'calgate-dashboard',
      });
      if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string') {
        return null;
      }
      return { userId: payload.sub, tenantId: payload.tid };
    } catch {
      return null;
    }
  }

  async require(cookieHeader: string | undefined): Promise<Session> {
    const session = await this.read(cookieHeader);
    if (session === null) {
      throw new CalgateError('unauthenticated', 'Sign in to the Calgate dashboard first.');
    }
    return session;
  }

  #cookie(token: string, maxAge: number): string {
    return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${this.#secure ? '; Secure' : ''}`;
  }
}
