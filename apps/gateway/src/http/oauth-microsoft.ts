/**
 * "Connect Microsoft" for the dashboard: /oauth/microsoft/start stores a PKCE verifier under a
 * one-time nonce and sends the browser to Microsoft's authorize endpoint with a signed reference
 * to it; /oauth/microsoft/callback checks the signature, the signed-in tenant and the nonce
 * (once), redeems the code and records the account. The same state and CSRF rules as Google's
 * flow (http/oauth.ts); the signed state names its provider, so one flow's state is refused by
 * the other's callback.
 */
import { createHash, randomBytes } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import type { ConnectionRepository, GrantAccess, OAuthStateRepository } from '@calgate/store';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { ConnectResult } from '../connections/record.ts';
import { escapeHtml, ResultPages } from '../google/pages.ts';
import { connectionWritable } from '../google/service.ts';
import { type MicrosoftAccessLevel, microsoftScopesFor } from '../microsoft/authorize.ts';
import {
  MICROSOFT_NOT_CONFIGURED,
  type MicrosoftConnections,
  microsoftSetupFix,
} from '../microsoft/connect.ts';
import type { SessionManager } from '../session.ts';
import { DEFAULT_DASHBOARD_DIR } from './static.ts';

export interface MicrosoftOAuthRouteDeps {
  microsoft: MicrosoftConnections;
  states: OAuthStateRepository;
  sessions: SessionManager;
  /** Key that signs the `state` parameter. */
  stateKey: Uint8Array;
  publicUrl: string;
  /** Finds the account a reconnect names (for its sign-in hint and access level). */
  connections?: ConnectionRepository;
  dashboardDir?: string | undefined;
}

const STATE_TTL_MS = 10 * 60 * 1000;
const AUDIENCE = 'calgate-oauth-state:microsoft';

const StartQuery = z.strictObject({
  /** What the connected account's calendars are granted to the keys. */
  access: z.enum(['none', 'read', 'write']).default('read'),
  /** What Calgate asks Microsoft for; absent, it follows `access` (Write needs Calendars.ReadWrite). */
  microsoft: z.enum(['read', 'write']).optional(),
  /** The account to sign in as (Microsoft's `login_hint`); absent, the person picks one. */
  account: z.preprocess((value) => (value === '' ? undefined : value), z.email().max(320).optional()),
  /** Reconnecting a connected account: signs in as it, at the level it had. */
  reconnect: z.string().min(1).max(64).optional(),
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
  error_description: z.string().max(4000).optional(),
});

function notConfiguredBody(publicUrl: string): string {
  return `<p class="notice error">${escapeHtml(MICROSOFT_NOT_CONFIGURED)}</p><p>${escapeHtml(microsoftSetupFix(publicUrl))}</p>`;
}

function connectedBody(result: ConnectResult): string {
  const list = result.calendars.map((calendar) => `<li>${escapeHtml(calendar.summary)}</li>`).join('');
  const access = result.writable
    ? '<p>Calgate may read and write these calendars (where the account itself may write); choose per key on the Permissions page.</p>'
    : '<p><span class="badge">read-only</span> Calgate asked Microsoft only to read these calendars (Calendars.Read). Reconnect with “Read and write” when a key should change them.</p>';
  return `${access}<p>${result.calendars.length} calendar(s):</p><ul>${list}</ul>`;
}

export function registerMicrosoftOAuthRoutes(app: FastifyInstance, deps: MicrosoftOAuthRouteDeps): void {
  const pages = new ResultPages(deps.dashboardDir ?? DEFAULT_DASHBOARD_DIR);
  const redirectUri = `${deps.publicUrl.replace(/\/+$/, '')}/oauth/microsoft/callback`;
  const notConfigured = (reply: FastifyReply) =>
    pages.send(reply, 503, {
      title: 'Microsoft is not configured',
      body: notConfiguredBody(deps.publicUrl),
    });

  app.get('/oauth/microsoft/start', async (request, reply) => {
    const session = await deps.sessions.read(request.headers.cookie);
    if (session === null) {
      return pages.send(reply, 401, {
        title: 'Sign in first',
        body: '<p>Connecting a Microsoft account needs a signed-in dashboard session. Sign in, then use “Connect Microsoft” on the Accounts page.</p>',
      });
    }
    if (!deps.microsoft.configured()) {
      return notConfigured(reply);
    }
    const parsed = StartQuery.safeParse(request.query);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .map((i) => `${i.path.join('.') || 'query'}: ${i.message}`)
        .join('; ');
      return pages.send(reply, 400, {
        title: 'Invalid request',
        body: `<p>${escapeHtml(`Invalid parameters: ${issues}`)}</p>`,
      });
    }
    const query = parsed.data;
    let level: MicrosoftAccessLevel = query.microsoft ?? (query.access === 'write' ? 'write' : 'read');
    let loginHint: string | undefined = query.account;
    let grantAccess: GrantAccess = query.access;
    if (query.reconnect !== undefined) {
      const connection = await deps.connections?.get(session.tenantId, query.reconnect);
      if (connection == null || connection.provider !== 'microsoft') {
        return pages.send(reply, 404, {
          title: 'Account not found',
          body: `<p>No connected Microsoft account ${escapeHtml(query.reconnect)} in this tenant.</p>`,
        });
      }
      // Same account, same level (unless more is asked); grants stay as they are.
      level = query.microsoft ?? (connectionWritable(connection) ? 'write' : 'read');
      loginHint = connection.accountEmail;
      grantAccess = 'none';
    }
    const nonce = randomBytes(24).toString('base64url');
    const codeVerifier = randomBytes(48).toString('base64url');
    await deps.states.create(
      {
        nonce,
        tenantId: session.tenantId,
        userId: session.userId,
        codeVerifier,
        grantAccess,
        grantKeyIds: query.keys,
      },
      STATE_TTL_MS,
    );
    // Signed, so the level cannot be changed on the way back.
    const state = await new SignJWT({
      tid: session.tenantId,
      lvl: level,
      ...(query.reconnect === undefined ? {} : { acc: loginHint }),
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setJti(nonce)
      .setIssuedAt()
      .setExpirationTime(`${STATE_TTL_MS / 1000}s`)
      .setAudience(AUDIENCE)
      .sign(deps.stateKey);
    return reply.redirect(
      deps.microsoft.oauth().authorizationUrl({
        redirectUri,
        state,
        codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url'),
        scopes: microsoftScopesFor(level),
        ...(loginHint === undefined ? {} : { loginHint }),
      }),
      302,
    );
  });

  app.get('/oauth/microsoft/callback', async (request, reply) => {
    if (!deps.microsoft.configured()) {
      return notConfigured(reply);
    }
    const parsed = CallbackQuery.safeParse(request.query);
    if (!parsed.success) {
      return pages.send(reply, 400, {
        title: 'Invalid callback',
        body: '<p>The request is missing its state. Start connecting the account again from the Accounts page.</p>',
      });
    }
    let claims: { nonce: string; tenantId: string; level: MicrosoftAccessLevel; account?: string };
    try {
      const { payload } = await jwtVerify(parsed.data.state, deps.stateKey, {
        algorithms: ['HS256'],
        audience: AUDIENCE,
      });
      if (typeof payload.jti !== 'string' || typeof payload.tid !== 'string') {
        throw new Error('incomplete state');
      }
      claims = {
        nonce: payload.jti,
        tenantId: payload.tid,
        level: payload.lvl === 'write' ? 'write' : 'read',
        ...(typeof payload.acc === 'string' ? { account: payload.acc } : {}),
      };
    } catch {
      return pages.send(reply, 400, {
        title: 'Invalid or expired request',
        body: '<p>Start connecting the account again from the Accounts page.</p>',
      });
    }
    const session = await deps.sessions.read(request.headers.cookie);
    if (session === null || session.tenantId !== claims.tenantId) {
      return pages.send(reply, 403, {
        title: 'Sign in first',
        body: '<p>This consent was started by another session. Sign in and start again.</p>',
      });
    }
    const stored = await deps.states.consume(claims.nonce, claims.tenantId);
    if (stored === null) {
      return pages.send(reply, 400, {
        title: 'This link was already used',
        body: '<p>Start connecting the account again from the Accounts page.</p>',
      });
    }
    if (parsed.data.error !== undefined || parsed.data.code === undefined) {
      const denied = parsed.data.error === 'access_denied';
      const said = [parsed.data.error ?? 'no code', parsed.data.error_description?.split(/\r?\n/)[0]]
        .filter(Boolean)
        .join(': ');
      return pages.send(reply, 400, {
        title: denied ? 'Microsoft access was not granted' : 'Microsoft answered with an error',
        body: denied
          ? '<p>The consent was cancelled on Microsoft’s page, so nothing changed. Connect again when you are ready.</p>'
          : `<p>Microsoft answered: <code>${escapeHtml(said)}</code>. Nothing changed; try again.</p>`,
      });
    }
    try {
      const scopes = microsoftScopesFor(claims.level);
      const tokens = await deps.microsoft
        .oauth()
        .exchangeCode({ code: parsed.data.code, codeVerifier: stored.codeVerifier, redirectUri, scopes });
      const result = await deps.microsoft.connectOAuth(
        claims.tenantId,
        tokens,
        { access: stored.grantAccess, keyIds: stored.grantKeyIds },
        claims.account,
      );
      return pages.send(reply, 200, {
        title: `${result.reconnected ? 'Reconnected' : 'Connected'} ${result.accountEmail}`,
        body: connectedBody(result),
      });
    } catch (error) {
      if (!(error instanceof CalgateError)) {
        throw error;
      }
      request.log.warn({ err: { code: error.code, message: error.message } }, 'Microsoft connection failed');
      return pages.send(reply, error.code === 'upstream_unavailable' ? 502 : 400, {
        title: 'The account could not be connected',
        body: `<p>${escapeHtml(error.message)}</p>`,
      });
    }
  });
}
