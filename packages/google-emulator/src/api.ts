/**
 * Calendar API v3 routes share one wrapper: authenticate the bearer token, check the scope,
 * then run the handler with the caller. Conditional-request helpers live here too.
 */
import { authenticate, type Principal, requireScope, type ScopeClass } from './auth.ts';
import { apiErrors } from './errors.ts';
import type { Reply, RequestContext, Route } from './http.ts';
import type { TokenStore } from './oauth/tokens.ts';
import type { EmulatorState } from './state.ts';

export const API_PREFIX = '/calendar/v3';

export interface ApiDeps {
  state: EmulatorState;
  tokens: TokenStore;
}

export type ApiHandler = (ctx: RequestContext, principal: Principal) => Reply | Promise<Reply>;

export function apiRoute(
  deps: ApiDeps,
  method: string,
  pattern: string,
  op: string,
  scope: ScopeClass,
  handler: ApiHandler,
): Route {
  return {
    method,
    pattern: `${API_PREFIX}${pattern}`,
    op,
    handler: async (ctx) => {
      const principal = await authenticate(ctx, deps.state, deps.tokens);
      requireScope(principal, scope);
      return handler(ctx, principal);
    },
  };
}

function etagList(header: string | string[] | undefined): string[] | null {
  if (header === undefined) {
    return null;
  }
  return (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .filter(Boolean);
}

/** If-Match: the write goes ahead only when the stored etag is one of those given. */
export function checkIfMatch(ctx: RequestContext, etag: string): void {
  const wanted = etagList(ctx.headers['if-match']);
  if (wanted !== null && !wanted.includes('*') && !wanted.includes(etag)) {
    throw apiErrors.conditionNotMet();
  }
}

/** If-None-Match on a read: 304 when the client's copy is current. */
export function notModified(ctx: RequestContext, etag: string): Reply | null {
  const wanted = etagList(ctx.headers['if-none-match']);
  if (wanted !== null && (wanted.includes('*') || wanted.includes(etag))) {
    return { status: 304, headers: { etag } };
  }
  return null;
}

export const boolParam = (q: URLSearchParams, name: string): boolean => q.get(name) === 'true';

export function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') {
    return undefined;
  }
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    throw apiErrors.invalid(`Invalid value for ${name}: ${v}`, name);
  }
  return n;
}
