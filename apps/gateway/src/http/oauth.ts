import { createHash, randomBytes } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import { GOOGLE_WRITE_SCOPES, type GoogleAccessLevel, scopesFor } from '@calgate/providers';
import type { ConnectionRepository, GrantAccess, OAuthStateRepository } from '@calgate/store';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import { escapeHtml, notConfiguredBody, ResultPages } from '../google/pages.ts';
import { type ConnectResult, connectionWritable, type GoogleConnections } from '../google/service.ts';
import type { SessionManager } from '../session.ts';
import { DEFAULT_DASHBOARD_DIR } from './static.ts';

export interface OAuthRouteDeps {
  google: GoogleConnections;
  states: OAuthStateRepository;
  sessions: SessionManager;
  /** Key that signs the `state` parameter. */
  stateKey: Uint8Array;
  publicUrl: string;
  /** Finds the connection "Allow writing" upgrades; absent, upgrades answer 404. */
  connections?: ConnectionRepository;
  /** The built dashboard, whose stylesheet the result pages use. */
  dashboardDir?: string | undefined;
}

const STATE_TTL_MS = 10 * 60 * 1000;

const StartQuery = z.strictObject({
  /** What the connected account's calendars are granted to the keys. */
  access: z.enum(['none', 'read', 'write']).default('read'),
  /**
   * What Calgate asks Google for: `read` (calendar.readonly) or `write`. Absent, it follows
   * `access`: granting Write needs write scopes, anything else asks only to read.
   */
  google: z.enum(['read', 'write']).optional(),
  /** "Allow writing" on a connected account: asks only for the write scopes, for that account. */
  upgrade: z.string().min(1).max(64).optional(),
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

/** The state's claims beyond the nonce: the tenant, the level asked for, the upgraded connection. */
interface StateClaims {
  nonce: string;
  tenantId: string;
  level: GoogleAccessLevel;
  upgrade: string | undefined;
}

function connectedBody(result: ConnectResult, upgraded: boolean): string {
  const list = result.calendars.map((calendar) => `<li>${escapeHtml(calendar.summary)}</li>`).join('');
  const access = result.writable
    ? '<p>Calgate may read and write these calendars (where the account itself may write); choose per key on the Permissions page.</p>'
    : '<p><span class="badge">read-only</span> Calgate asked Google only to read these calendars. Use “Allow writing” on the Accounts page when a key should change them.</p>';
  return `${upgraded ? '<p>Writing is now allowed for this account. Grants are unchanged: tick Write for a key on the Permissions page.</p>' : ''}${access}<p>${result.calendars.length} calendar(s):</p><ul>${list}</ul>`;
}

/**
 * Google OAuth for the dashboard: /start stores a PKCE verifier under a one-time nonce and sends
 * the browser to Google with a signed reference to it; /callback checks the signature, the
 * signed-in tenant and the nonce (once), exchanges the code and records the account.
 */
export function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): void {
  const pages = new ResultPages(deps.dashboardDir ?? DEFAULT_DASHBOARD_DIR);
  const configured = () => deps.google.configured();
  const notConfigured = (reply: FastifyReply) =>
    pages.send(reply, 503, { title: 'Google is not configured', body: notConfiguredBody(deps.publicUrl) });

  app.get('/oauth/google/start', async (request, reply) => {
    const session = await deps.sessions.read(request.headers.cookie);
    if (session === null) {
      return pages.send(reply, 401, {
        title: 'Sign in first',
        body: '<p>Connecting a Google account needs a signed-in dashboard session. Sign in, then use “Connect Google” on the Accounts page.</p>',
      });
    }
    if (!configured()) {
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
    let loginHint: string | undefined;
    let level: GoogleAccessLevel = query.google ?? (query.access === 'write' ? 'write' : 'read');
    let scopes = scopesFor(level);
    if (query.upgrade !== undefined) {
      const connection = await deps.connections?.get(session.tenantId, query.upgrade);
      if (connection == null || connection.provider !== 'google' || connection.auth !== 'oauth') {
        return pages.send(reply, 404, {
          title: 'Account not found',
          body: `<p>No connected Google account ${escapeHtml(query.upgrade)} in this tenant.</p>`,
        });
      }
      if (connectionWritable(connection)) {
        return pages.send(reply, 200, {
          title: `Writing is already allowed for ${connection.accountEmail}`,
          body: '<p>Google already granted Calgate write access to this account.</p>',
        });
      }
      // Incremental authorization: only the scopes added; Google keeps the ones granted before.
      level = 'write';
      scopes = GOOGLE_WRITE_SCOPES;
      loginHint = connection.accountEmail;
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
        grantAccess: (query.upgrade === undefined ? query.access : 'none') as GrantAccess,
        grantKeyIds: query.keys,
      },
      STATE_TTL_MS,
    );
    // Signed, so the level and the upgraded connection cannot be changed on the way back.
    const state = await new SignJWT({
      tid: session.tenantId,
      lvl: level,
      ...(query.upgrade === undefined ? {} : { upg: query.upgrade }),
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setJti(nonce)
      .setIssuedAt()
      .setExpirationTime(`${STATE_TTL_MS / 1000}s`)
      .setAudience('calgate-oauth-state')
      .sign(deps.stateKey);
    const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
    return reply.redirect(
      oauth.authorizationUrl({
        state,
        codeChallenge,
        scopes,
        ...(loginHint === undefined ? {} : { loginHint }),
      }),
      302,
    );
  });

  app.get('/oauth/google/callback', async (request, reply) => {
    if (!configured()) {
      return notConfigured(reply);
    }
    const parsed = CallbackQuery.safeParse(request.query);
    if (!parsed.success) {
      return pages.send(reply, 400, {
        title: 'Invalid callback',
        body: '<p>The request is missing its state. Start connecting the account again from the Accounts page.</p>',
      });
    }
    let claims: StateClaims;
    try {
      const { payload } = await jwtVerify(parsed.data.state, deps.stateKey, {
        algorithms: ['HS256'],
        audience: 'calgate-oauth-state',
      });
      if (typeof payload.jti !== 'string' || typeof payload.tid !== 'string') {
        throw new Error('incomplete state');
      }
      claims = {
        nonce: payload.jti,
        tenantId: payload.tid,
        level: payload.lvl === 'write' ? 'write' : 'read',
        upgrade: typeof payload.upg === 'string' ? payload.upg : undefined,
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
      return pages.send(reply, 400, {
        title: denied ? 'Google access was not granted' : 'Google answered with an error',
        body: denied
          ? '<p>The consent was cancelled on Google’s page, so nothing changed. Connect again when you are ready.</p>'
          : `<p>Google answered: <code>${escapeHtml(parsed.data.error ?? 'no code')}</code>. Nothing changed; try again.</p>`,
      });
    }
    try {
      const account = await deps.google
        .oauth()
        .exchangeCode({ code: parsed.data.code, codeVerifier: stored.codeVerifier });
      const result =
        claims.upgrade === undefined
          ? await deps.google.connectOAuth(claims.tenantId, account, {
              access: stored.grantAccess,
              keyIds: stored.grantKeyIds,
            })
          : await deps.google.upgradeOAuth(claims.tenantId, claims.upgrade, account);
      const upgraded = claims.upgrade !== undefined;
      if (upgraded && !result.writable) {
        return pages.send(reply, 400, {
          title: `Writing was not allowed for ${result.accountEmail}`,
          body: '<p>Google did not grant the calendar write permission (it may have been unticked on Google’s page). The account stays read-only.</p>',
        });
      }
      return pages.send(reply, 200, {
        title: `${upgraded ? 'Writing allowed for' : result.reconnected ? 'Reconnected' : 'Connected'} ${result.accountEmail}`,
        body: connectedBody(result, upgraded),
      });
    } catch (error) {
      if (!(error instanceof CalgateError)) {
        throw error;
      }
      request.log.warn({ err: error }, 'Google connection failed');
      return pages.send(reply, error.code === 'upstream_unavailable' ? 502 : 400, {
        title: 'The account could not be connected',
        body: `<p>${escapeHtml(error.message)}</p>`,
      });
    }
  });
}
