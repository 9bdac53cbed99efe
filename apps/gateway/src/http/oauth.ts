import { createHash, randomBytes } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { GrantAccess, OAuthStateRepository } from '@calgate/store';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { GoogleConnections } from '../google/service.ts';
import type { SessionManager } from '../session.ts';

export interface OAuthRouteDeps {
  google: GoogleConnections;
  states: OAuthStateRepository;
  sessions: SessionManager;
  /** Key that signs the `state` parameter. */
  stateKey: Uint8Array;
  publicUrl: string;
}

const STATE_TTL_MS = 10 * 60 * 1000;

const StartQuery = z.strictObject({
  access: z.enum(['none', 'read', 'write']).default('read'),
  keys: z
    .string()
    .max(4000)
    .default('all')
    .transform((value) =>
      value === 'all'
        ? []
        : value
            .split(',')
            .map((id) => id.trim())
            .filter(Boolean),
    ),
});

const CallbackQuery = z.object({
  state: z.string().min(1).max(4000),
  code: z.string().min(1).max(4000).optional(),
  error: z.string().max(200).optional(),
});

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(reply: FastifyReply, status: number, title: string, body: string) {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Calgate</title></head><body><main><h1>${escapeHtml(title)}</h1>${body}<p><a href="/">Back to Calgate</a></p></main></body></html>`,
    );
}

/**
 * Google OAuth for the dashboard: /start stores a PKCE verifier under a one-time nonce and sends
 * the browser to Google with a signed reference to it; /callback checks the signature, the
 * signed-in tenant and the nonce (once), exchanges the code and records the account.
 */
export function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): void {
  app.get('/oauth/google/start', async (request, reply) => {
    const session = await deps.sessions.require(request.headers.cookie);
    const parsed = StartQuery.safeParse(request.query);
    if (!parsed.success) {
      throw new CalgateError(
        'invalid_argument',
        `Invalid parameters: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ')}`,
      );
    }
    const oauth = deps.google.oauth();
    const nonce = randomBytes(24).toString('base64url');
    const codeVerifier = randomBytes(48).toString('base64url');
    await deps.states.create(
      {
        nonce,
        tenantId: session.tenantId,
        userId: session.userId,
        codeVerifier,
        grantAccess: parsed.data.access as GrantAccess,
        grantKeyIds: parsed.data.keys,
      },
      STATE_TTL_MS,
    );
    const state = await new SignJWT({ tid: session.tenantId })
      .setProtectedHeader({ alg: 'HS256' })
      .setJti(nonce)
      .setIssuedAt()
      .setExpirationTime(`${STATE_TTL_MS / 1000}s`)
      .setAudience('calgate-oauth-state')
      .sign(deps.stateKey);
    const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
    return reply.redirect(oauth.authorizationUrl({ state, codeChallenge }), 302);
  });

  app.get('/oauth/google/callback', async (request, reply) => {
    const parsed = CallbackQuery.safeParse(request.query);
    if (!parsed.success) {
      return page(reply, 400, 'Invalid callback', '<p>The request is missing its state.</p>');
    }
    let nonce: string;
    let tenantId: string;
    try {
      const { payload } = await jwtVerify(parsed.data.state, deps.stateKey, {
        algorithms: ['HS256'],
        audience: 'calgate-oauth-state',
      });
      if (typeof payload.jti !== 'string' || typeof payload.tid !== 'string') {
        throw new Error('incomplete state');
      }
      nonce = payload.jti;
      tenantId = payload.tid;
    } catch {
      return page(
        reply,
        400,
        'Invalid or expired request',
        '<p>Start connecting the account again from the dashboard.</p>',
      );
    }
    const session = await deps.sessions.read(request.headers.cookie);
    if (session === null || session.tenantId !== tenantId) {
      return page(
        reply,
        403,
        'Sign in first',
        '<p>This consent was started by another session. Sign in and start again.</p>',
      );
    }
    const stored = await deps.states.consume(nonce, tenantId);
    if (stored === null) {
      return page(
        reply,
        400,
        'This link was already used',
        '<p>Start connecting the account again from the dashboard.</p>',
      );
    }
    if (parsed.data.error !== undefined || parsed.data.code === undefined) {
      return page(
        reply,
        400,
        'Google access was not granted',
        `<p>Google answered: ${escapeHtml(parsed.data.error ?? 'no code')}.</p>`,
      );
    }
    const account = await deps.google
      .oauth()
      .exchangeCode({ code: parsed.data.code, codeVerifier: stored.codeVerifier });
    const result = await deps.google.connectOAuth(tenantId, account, {
      access: stored.grantAccess,
      keyIds: stored.grantKeyIds,
    });
    const list = result.calendars.map((calendar) => `<li>${escapeHtml(calendar.summary)}</li>`).join('');
    return page(
      reply,
      200,
      `${result.reconnected ? 'Reconnected' : 'Connected'} ${result.accountEmail}`,
      `<p>${result.calendars.length} calendar(s):</p><ul>${list}</ul>`,
    );
  });
}
