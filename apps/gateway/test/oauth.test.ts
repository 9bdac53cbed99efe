import { randomBytes } from 'node:crypto';
import { DEFAULT_TOOLSETS, TOOLSETS } from '@calgate/store';
import { freePort } from '@calgate/testkit';
import { catalogue } from '@calgate/tools';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, type Browser, call, sessionFor } from './api-client.ts';
import {
  connectClient,
  HIGH_RATE_LIMITS,
  rpc,
  startTestGateway,
  type TestGateway,
  textOf,
} from './harness.ts';
import { watchKeyDrops } from './key-drops.ts';
import {
  authorize,
  type Callback,
  consentRequest,
  decide,
  pkce,
  postForm,
  registerClient,
  startCallback,
} from './oauth-flow.ts';

/**
 * Calgate's authorization server over real HTTP: discovery, registration, authorize → consent
 * (answered through the consent page's API as the signed-in person) → code → token → MCP, and
 * every refusal the authorization section asks for. The browser and the official SDK client's
 * own flow are in oauth-sdk.browser.test.ts.
 */
describe('OAuth authorization server', () => {
  let gw: TestGateway;
  let callback: Callback;
  let ann: Browser;
  let work: string;
  let home: string;
  const clients: Client[] = [];
  const encryptionKey = randomBytes(32).toString('base64');

  beforeAll(async () => {
    const port = await freePort();
    gw = await startTestGateway({
      ...HIGH_RATE_LIMITS,
      ENCRYPTION_KEY: encryptionKey,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ALLOWED_ORIGINS: 'http://calgate.test',
      KEY_CACHE_TTL_MS: '200',
    });
    callback = await startCallback();
    const { tenantId } = await gw.seedTenant('Acme');
    work = await gw.localCalendar(tenantId, 'Work');
    home = await gw.localCalendar(tenantId, 'Home');
    ann = await sessionFor(gw, tenantId);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await callback.close();
    await gw.stop();
  });

  async function newClient(extra: Record<string, unknown> = {}, target = gw) {
    const registered = await registerClient(target, {
      client_name: 'Test Agent',
      redirect_uris: [callback.redirectUri],
      ...extra,
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    return registered.body as { client_id: string; client_secret?: string };
  }

  /** GET /oauth/authorize as a client starts it (code, PKCE S256, the callback); `extra` adds or overrides. */
  async function begin(clientId: string, extra: Record<string, string> = {}) {
    const { verifier, challenge } = pkce();
    const started = await authorize(gw, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callback.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    });
    return { ...started, verifier };
  }

  /** The token endpoint's authorization_code grant for a public client; `extra` adds or overrides. */
  const redeem = (code: string, verifier: string, clientId: string, extra: Record<string, string> = {}) =>
    postForm(gw.url, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: callback.redirectUri,
      code_verifier: verifier,
      client_id: clientId,
      ...extra,
    });

  /** register → authorize → consent (allow) → the code, verifier and redirect. */
  async function codeFor(
    as: Browser,
    calendars: { calendarId: string; read: boolean; write: boolean }[],
    options: { clientId?: string; scope?: string; target?: TestGateway; toolsets?: string[] } = {},
  ) {
    const target = options.target ?? gw;
    const clientId = options.clientId ?? (await newClient({}, target)).client_id;
    const { verifier, challenge } = pkce();
    const started = await authorize(target, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callback.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: target.mcpUrl,
      state: 'xyz',
      ...(options.scope === undefined ? {} : { scope: options.scope }),
    });
    expect(started.status, started.text).toBe(302);
    const decided = await decide(target, as, consentRequest(started.location), {
      decision: 'allow',
      calendars,
      ...(options.toolsets === undefined ? {} : { toolsets: options.toolsets }),
    });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    const back = new URL(decided.body.redirectTo);
    expect(`${back.origin}${back.pathname}`).toBe(callback.redirectUri);
    expect(back.searchParams.get('state')).toBe('xyz');
    expect(back.searchParams.get('iss')).toBe(target.url);
    return { clientId, verifier, code: back.searchParams.get('code') ?? '' };
  }

  async function tokensFor(
    as: Browser,
    calendars: { calendarId: string; read: boolean; write: boolean }[],
    target = gw,
    toolsets?: string[],
  ) {
    const { clientId, verifier, code } = await codeFor(as, calendars, {
      target,
      ...(toolsets === undefined ? {} : { toolsets }),
    });
    const token = await postForm(target.url, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: callback.redirectUri,
      code_verifier: verifier,
      client_id: clientId,
      resource: target.mcpUrl,
    });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    return {
      clientId,
      ...(token.body as { access_token: string; refresh_token: string; scope: string; expires_in: number }),
    };
  }

  async function mcp(token: string): Promise<Client> {
    const client = await connectClient(gw.mcpUrl, token);
    clients.push(client);
    return client;
  }

  it('a 401 from /api/mcp leads to the metadata; both documents describe the server', async () => {
    const denied = await rpc(gw.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(denied.status).toBe(401);
    const challenge = denied.headers.get('www-authenticate') ?? '';
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadataUrl).toBe(`${gw.url}/.well-known/oauth-protected-resource/api/mcp`);
    const resource = await (await fetch(metadataUrl as string)).json();
    expect(resource).toMatchObject({
      resource: gw.mcpUrl,
      authorization_servers: [gw.url],
      scopes_supported: ['calendars:read', 'calendars:write'],
      bearer_methods_supported: ['header'],
    });
    expect(await (await fetch(`${gw.url}/.well-known/oauth-protected-resource`)).json()).toEqual(resource);
    const server: Body = await (await fetch(`${gw.url}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({
      issuer: gw.url,
      authorization_endpoint: `${gw.url}/oauth/authorize`,
      token_endpoint: `${gw.url}/oauth/token`,
      registration_endpoint: `${gw.url}/oauth/register`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    });
    expect(server.token_endpoint_auth_methods_supported).toContain('none');
    expect(await (await fetch(`${gw.url}/.well-known/openid-configuration`)).json()).toEqual(server);
    // A bad key still says why, beside where to sign in.
    const bad = await rpc(
      gw.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { authorization: 'Bearer cg_live_nope' },
    );
    expect(bad.headers.get('www-authenticate')).toMatch(
      /resource_metadata=".*", scope=".*", error="invalid_token"/,
    );
  });

  it('answers CORS preflights on the token and registration endpoints for loopback pages', async () => {
    for (const path of ['/oauth/token', '/oauth/register', '/.well-known/oauth-authorization-server']) {
      const response = await fetch(`${gw.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://localhost:6274',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(response.status, path).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    }
    const token = await fetch(`${gw.url}/oauth/token`, {
      method: 'POST',
      headers: { origin: 'http://localhost:6274', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code',
    });
    expect(token.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
  });

  it('a consented connection reads only the calendars ticked, read-only unless Write was ticked', async () => {
    const consent = await registerClient(gw, {
      client_name: 'Claude',
      redirect_uris: [callback.redirectUri],
    });
    const started = await begin(consent.body.client_id);
    const page = await call(
      gw,
      'GET',
      `/api/v1/oauth/consent?request=${encodeURIComponent(consentRequest(started.location))}`,
      {
        as: ann,
      },
    );
    expect(page.status).toBe(200);
    expect(page.body.client).toMatchObject({
      name: 'Claude',
      kind: 'registered',
      redirectHost: new URL(callback.redirectUri).host,
    });
    expect(page.body.allowWrite).toBe(true);
    // No scope named: the client is taken to ask for both, each said in plain words.
    expect(page.body.scopes).toEqual([
      { scope: 'calendars:read', description: expect.stringMatching(/^See the calendars/) },
      { scope: 'calendars:write', description: expect.stringMatching(/^Create, change and delete events/) },
    ]);
    expect(page.body.calendars.map((c: { summary: string }) => c.summary).sort()).toEqual(['Home', 'Work']);

    const tokens = await tokensFor(ann, [{ calendarId: work, read: true, write: false }]);
    expect(tokens.scope).toBe('calendars:read');
    const client = await mcp(tokens.access_token);
    const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect((listed.structuredContent as { calendars: { id: string }[] }).calendars.map((c) => c.id)).toEqual([
      work,
    ]);
    const write = await client.callTool({
      name: 'create_event',
      arguments: {
        calendarId: work,
        summary: 'Planning',
        start: { dateTime: '2026-12-02T10:00:00+01:00' },
        end: { dateTime: '2026-12-02T11:00:00+01:00' },
      },
    });
    expect(write.isError).toBe(true);
    expect(textOf(write)).toMatch(/write/i);

    const writer = await tokensFor(ann, [{ calendarId: home, read: true, write: true }]);
    expect(writer.scope).toBe('calendars:read calendars:write');
    const created = await (await mcp(writer.access_token)).callTool({
      name: 'create_event',
      arguments: {
        calendarId: home,
        summary: 'Dentist',
        start: { dateTime: '2026-12-02T10:00:00+01:00' },
        end: { dateTime: '2026-12-02T11:00:00+01:00' },
      },
    });
    expect(created.isError, textOf(created)).toBeFalsy();
  });

  it('consent offers every toolset (the default ones ticked); the connection gets only those chosen', async () => {
    const clientId = (await newClient()).client_id;
    const request = consentRequest((await begin(clientId)).location);
    const page = await call(gw, 'GET', `/api/v1/oauth/consent?request=${encodeURIComponent(request)}`, {
      as: ann,
    });
    expect(page.status).toBe(200);
    expect(page.body.toolsets.map((t: { name: string }) => t.name)).toEqual([...TOOLSETS]);
    for (const toolset of page.body.toolsets as { name: string; description: string; checked: boolean }[]) {
      expect(toolset.checked, toolset.name).toBe(
        (DEFAULT_TOOLSETS as readonly string[]).includes(toolset.name),
      );
      expect(toolset.description, toolset.name).not.toBe(toolset.name);
    }
    // Unknown or no toolsets are refused, and connect nothing.
    const unknown = await decide(gw, ann, request, {
      decision: 'allow',
      calendars: [{ calendarId: work, read: true, write: false }],
      toolsets: ['calendar', 'admin'],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/Unknown toolset 'admin'/);
    const none = await decide(gw, ann, request, {
      decision: 'allow',
      calendars: [{ calendarId: work, read: true, write: false }],
      toolsets: [],
    });
    expect(none.status).toBe(400);
    expect(none.body.error.message).toMatch(/at least one toolset/);
    expect(await gw.runtime.deps.dashboard.oauth.listConnections(ann.tenantId)).not.toContainEqual(
      expect.objectContaining({ clientId }),
    );

    // search and rules (rules is not ticked by default): tools/list holds their tools only.
    const chosen = ['search', 'rules'];
    const tokens = await tokensFor(ann, [{ calendarId: work, read: true, write: true }], gw, chosen);
    const connection = (await gw.runtime.deps.dashboard.oauth.listConnections(ann.tenantId)).find(
      (c) => c.clientId === tokens.clientId,
    );
    expect(connection?.toolsets).toEqual(chosen);
    const client = await mcp(tokens.access_token);
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    const toolsetOf = new Map(
      catalogue().entries.map((entry) => [entry.definition.name, entry.definition.toolset]),
    );
    expect(listed).toEqual(expect.arrayContaining(['search', 'fetch', 'list_projects']));
    for (const name of listed) {
      expect(chosen, name).toContain(toolsetOf.get(name));
    }
    for (const hidden of ['list_calendars', 'list_events', 'create_event', 'book_slot', 'find_free_slots']) {
      expect(listed).not.toContain(hidden);
      expect(toolsetOf.has(hidden), hidden).toBe(true);
    }
    // A tool of a toolset left unticked is refused, even on a calendar with Write.
    const refused = await client.callTool({
      name: 'create_event',
      arguments: {
        calendarId: work,
        summary: 'Not allowed',
        start: { dateTime: '2026-12-03T10:00:00+01:00' },
        end: { dateTime: '2026-12-03T11:00:00+01:00' },
      },
    });
    expect(refused.isError).toBe(true);
    // An app is told how an app gets a toolset (consent again), not an API key's settings.
    expect(textOf(refused)).toContain(
      "create_event is in the 'calendar' toolset, which this connected app was not given when it was approved (its toolsets: search, rules). Connect the app again and tick 'calendar' on Calgate's consent page; approving it again replaces its earlier choices.",
    );
    const listEvents = await client.callTool({
      name: 'list_events',
      arguments: { calendarId: work, timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-05T00:00:00Z' },
    });
    expect(listEvents.isError).toBe(true);
    expect(textOf(listEvents)).toMatch(/'calendar' toolset/);
    const { rows } = await gw.db.pool.query(
      "SELECT count(*)::int AS n FROM local_events WHERE summary = 'Not allowed'",
    );
    expect(rows[0].n).toBe(0);
    // A chosen toolset's tool answers.
    const projects = await client.callTool({ name: 'list_projects', arguments: {} });
    expect(projects.isError, textOf(projects)).toBeFalsy();
  });

  it('a client that asked for read only cannot be given Write', async () => {
    const clientId = (await newClient()).client_id;
    const started = await begin(clientId, {
      scope: 'calendars:read',
    });
    const request = consentRequest(started.location);
    const page = await call(gw, 'GET', `/api/v1/oauth/consent?request=${encodeURIComponent(request)}`, {
      as: ann,
    });
    expect(page.body.allowWrite).toBe(false);
    expect(page.body.scopes.map((s: { scope: string }) => s.scope)).toEqual(['calendars:read']);
    const refused = await decide(gw, ann, request, {
      decision: 'allow',
      calendars: [{ calendarId: work, read: true, write: true }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/read access only/);
  });

  it('a member connects apps with Read only; an auditor connects none', async () => {
    const as = async (role: string) => {
      const person = await sessionFor(gw, ann.tenantId);
      await gw.db.pool.query('UPDATE users SET role = $2 WHERE id = $1', [person.userId, role]);
      return person;
    };
    const member = await as('member');
    const clientId = (await newClient()).client_id;
    const request = consentRequest((await begin(clientId)).location);
    const page = await call(gw, 'GET', `/api/v1/oauth/consent?request=${encodeURIComponent(request)}`, {
      as: member,
    });
    // The app did ask for write (the page says so); the member just cannot grant it.
    expect(page.body.scopes.map((s: { scope: string }) => s.scope)).toEqual([
      'calendars:read',
      'calendars:write',
    ]);
    expect(page.body.allowWrite).toBe(false);
    const write = await decide(gw, member, request, {
      decision: 'allow',
      calendars: [{ calendarId: work, read: true, write: true }],
    });
    expect(write.status).toBe(403);
    expect(write.body.error.message).toMatch(/Read/);
    const read = await decide(gw, member, request, {
      decision: 'allow',
      calendars: [{ calendarId: work, read: true, write: false }],
    });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    const auditor = await as('auditor');
    const refused = await decide(gw, auditor, request, { decision: 'allow', calendars: [] });
    expect(refused.status).toBe(403);
  });

  it('Deny sends access_denied back with the state', async () => {
    const clientId = (await newClient()).client_id;
    const started = await begin(clientId, {
      state: 'abc',
    });
    const denied = await decide(gw, ann, consentRequest(started.location), { decision: 'deny' });
    const back = new URL(denied.body.redirectTo);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('abc');
    expect(await gw.runtime.deps.dashboard.oauth.listConnections(ann.tenantId)).not.toContainEqual(
      expect.objectContaining({ clientId }),
    );
  });

  it('a wrong PKCE verifier is refused and burns the code', async () => {
    const { clientId, verifier, code } = await codeFor(ann, [{ calendarId: work, read: true, write: false }]);
    const wrong = await redeem(code, pkce().verifier, clientId);
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error: 'invalid_grant' });
    expect(wrong.body.error_description).toMatch(/verifier/);
    const right = await redeem(code, verifier, clientId);
    expect(right.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('a replayed code is refused and revokes the refresh token issued for it', async () => {
    const { clientId, verifier, code } = await codeFor(ann, [{ calendarId: work, read: true, write: false }]);
    const first = await redeem(code, verifier, clientId);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const replay = await redeem(code, verifier, clientId);
    expect(replay.body).toMatchObject({ error: 'invalid_grant' });
    expect(replay.body.error_description).toMatch(/already used/);
    const refresh = await postForm(gw.url, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
      client_id: clientId,
    });
    expect(refresh.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('a replayed code also stops the access token issued for it at once, despite the key cache', async () => {
    // A gateway of the same install that caches key lookups as long as it may (5 s).
    const port = await freePort();
    const cached = await startTestGateway(
      {
        ...HIGH_RATE_LIMITS,
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        ENCRYPTION_KEY: encryptionKey,
        ALLOWED_ORIGINS: 'http://calgate.test',
        KEY_CACHE_TTL_MS: '5000',
      },
      { db: gw.db },
    );
    try {
      const { clientId, verifier, code } = await codeFor(
        ann,
        [{ calendarId: work, read: true, write: false }],
        {
          target: cached,
        },
      );
      const exchange = () =>
        postForm(cached.url, '/oauth/token', {
          grant_type: 'authorization_code',
          code,
          redirect_uri: callback.redirectUri,
          code_verifier: verifier,
          client_id: clientId,
          resource: cached.mcpUrl,
        });
      const first = await exchange();
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      const token = first.body.access_token as string;
      const agent = await connectClient(cached.mcpUrl, token);
      clients.push(agent);
      const listed = await agent.callTool({ name: 'list_calendars', arguments: {} });
      expect(listed.isError).toBeFalsy();

      // Another tenant's key, looked up (and cached) on this gateway, then revoked behind the
      // cache's back: while its lookup stays cached, calls with it are still let through.
      const bystander = await gw.seedTenant('Bystander');
      const asBystander = () =>
        rpc(
          cached.mcpUrl,
          { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} },
          {
            authorization: `Bearer ${bystander.secret}`,
          },
        );
      expect((await asBystander()).status).toBe(200);
      await gw.db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [bystander.keyId]);

      const drops = watchKeyDrops(cached);
      const replay = await exchange();
      drops.stop();
      expect(replay.status).toBe(400);
      expect(replay.body).toMatchObject({ error: 'invalid_grant' });
      expect(replay.body.error_description).toMatch(/already used.*revoked/);
      // Only the connection's tenant's cached keys are dropped, not every tenant's: the
      // bystander's lookup is still the cached one, until its own tenant's keys are dropped.
      expect(drops.tenants).toEqual([ann.tenantId]);
      expect((await asBystander()).status).toBe(200);
      cached.forgetKeys(bystander.tenantId);
      expect((await asBystander()).status).toBe(401);

      // The next call with the token is refused, though its lookup was cached a moment ago.
      const after = await rpc(
        cached.mcpUrl,
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_calendars', arguments: {} } },
        { authorization: `Bearer ${token}` },
      );
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
      await expect(agent.callTool({ name: 'list_calendars', arguments: {} })).rejects.toThrow();
      const refresh = await postForm(cached.url, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token,
        client_id: clientId,
        resource: cached.mcpUrl,
      });
      expect(refresh.body).toMatchObject({ error: 'invalid_grant' });
      const connections = await gw.runtime.deps.dashboard.oauth.listConnections(ann.tenantId);
      expect(connections.find((connection) => connection.clientId === clientId)?.revokedAt).not.toBeNull();
    } finally {
      await cached.stop();
    }
  });

  it('a redirect URI the client did not register gets an error page, never a redirect', async () => {
    const clientId = (await newClient()).client_id;
    const started = await begin(clientId, { redirect_uri: 'https://evil.example/callback' });
    expect(started.status).toBe(400);
    expect(started.location).toBeNull();
    expect(started.text).toContain('is not one that Test Agent registered');
    // At the token endpoint, a redirect URI other than the code's is an invalid grant.
    const {
      verifier,
      code,
      clientId: id,
    } = await codeFor(ann, [{ calendarId: work, read: true, write: false }]);
    const other = await redeem(code, verifier, id, { redirect_uri: `${callback.redirectUri}/other` });
    expect(other.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('a resource other than this MCP URL is refused at authorize and at the token endpoint', async () => {
    const clientId = (await newClient()).client_id;
    const started = await begin(clientId, {
      resource: 'https://other.example/mcp',
      state: 's1',
    });
    expect(started.status).toBe(302);
    const back = new URL(started.location ?? '');
    expect(back.searchParams.get('error')).toBe('invalid_target');
    expect(back.searchParams.get('state')).toBe('s1');

    const {
      verifier,
      code,
      clientId: id,
    } = await codeFor(ann, [{ calendarId: work, read: true, write: false }]);
    const wrong = await redeem(code, verifier, id, {
      resource: 'https://other.example/mcp',
    });
    expect(wrong.body).toMatchObject({ error: 'invalid_target' });
  });

  it('refuses authorize requests without PKCE S256 or with another response type', async () => {
    const clientId = (await newClient()).client_id;
    const base = { client_id: clientId, redirect_uri: callback.redirectUri, state: 's' };
    const cases: [Record<string, string>, string][] = [
      [{ response_type: 'code' }, 'invalid_request'],
      [
        { response_type: 'code', code_challenge: pkce().challenge, code_challenge_method: 'plain' },
        'invalid_request',
      ],
      [
        { response_type: 'token', code_challenge: pkce().challenge, code_challenge_method: 'S256' },
        'unsupported_response_type',
      ],
      [
        {
          response_type: 'code',
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
          scope: 'admin',
        },
        'invalid_scope',
      ],
    ];
    for (const [params, error] of cases) {
      const started = await authorize(gw, { ...base, ...params });
      expect(started.status).toBe(302);
      expect(new URL(started.location ?? '').searchParams.get('error'), JSON.stringify(params)).toBe(error);
    }
    const unknown = await authorize(gw, { ...base, client_id: 'ocl_unknown', response_type: 'code' });
    expect(unknown.status).toBe(400);
    expect(unknown.location).toBeNull();
  });

  it('refresh tokens rotate; reusing an old one revokes the whole family', async () => {
    const first = await tokensFor(ann, [{ calendarId: work, read: true, write: false }]);
    const refresh = (token: string) =>
      postForm(gw.url, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: token,
        client_id: first.clientId,
      });
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.scope).toBe('calendars:read');
    const listed = await (await mcp(second.body.access_token)).callTool({
      name: 'list_calendars',
      arguments: {},
    });
    expect(listed.isError).toBeFalsy();
    const reused = await refresh(first.refresh_token);
    expect(reused.body).toMatchObject({ error: 'invalid_grant' });
    expect(reused.body.error_description).toMatch(/already used/);
    const after = await refresh(second.body.refresh_token);
    expect(after.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('a revoked app stops working at once on this gateway, and cannot refresh', async () => {
    const tokens = await tokensFor(ann, [{ calendarId: work, read: true, write: false }]);
    const ok = await rpc(
      gw.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { authorization: `Bearer ${tokens.access_token}` },
    );
    expect(ok.status).toBe(200);
    const connection = (await gw.runtime.deps.dashboard.oauth.listConnections(ann.tenantId)).find(
      (c) => c.clientId === tokens.clientId,
    );
    // Revoked on the Connected apps page's API: this gateway forgets its cached lookup at once.
    const revoked = await call(gw, 'POST', `/api/v1/connected-apps/${connection?.keyId}/revoke`, { as: ann });
    expect(revoked.status).toBe(200);
    const denied = await rpc(
      gw.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { authorization: `Bearer ${tokens.access_token}` },
    );
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as Body).error.message).toMatch(/revoked/);
    const refresh = await postForm(gw.url, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: tokens.clientId,
    });
    expect(refresh.body).toMatchObject({ error: 'invalid_grant' });
  });

  it("another tenant's user approves for their own tenant only", async () => {
    const other = await gw.seedTenant('Globex');
    const globex = await gw.localCalendar(other.tenantId, 'Globex Ops');
    const bob = await sessionFor(gw, other.tenantId);
    const clientId = (await newClient()).client_id;
    const { verifier, ...started } = await begin(clientId);
    const request = consentRequest(started.location);
    const page = await call(gw, 'GET', `/api/v1/oauth/consent?request=${encodeURIComponent(request)}`, {
      as: bob,
    });
    expect(page.body.calendars.map((c: { id: string }) => c.id)).toEqual([globex]);
    const foreign = await decide(gw, bob, request, {
      decision: 'allow',
      calendars: [{ calendarId: work, read: true, write: false }],
    });
    expect(foreign.status).toBe(404);
    const bobsApps = await gw.runtime.deps.dashboard.oauth.listConnections(other.tenantId);
    expect(bobsApps).toEqual([]);

    const own = await decide(gw, bob, request, {
      decision: 'allow',
      calendars: [{ calendarId: globex, read: true, write: false }],
    });
    const code = new URL(own.body.redirectTo).searchParams.get('code') ?? '';
    const token = await redeem(code, verifier, clientId);
    const client = await mcp(token.body.access_token);
    const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
    expect((listed.structuredContent as { calendars: { id: string }[] }).calendars.map((c) => c.id)).toEqual([
      globex,
    ]);
    const peek = await client.callTool({
      name: 'list_events',
      arguments: { calendarId: work, timeMin: '2026-12-01T00:00:00Z', timeMax: '2026-12-03T00:00:00Z' },
    });
    expect(peek.isError).toBe(true);
  });

  it('a confidential client must authenticate; revocation ends its refresh tokens', async () => {
    const registered = await newClient({ token_endpoint_auth_method: 'client_secret_basic' });
    expect(registered.client_secret).toMatch(/^ocs_/);
    const { verifier, code } = await codeFor(ann, [{ calendarId: work, read: true, write: false }], {
      clientId: registered.client_id,
    });
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: callback.redirectUri,
      code_verifier: verifier,
    };
    const anonymous = await postForm(gw.url, '/oauth/token', { ...form, client_id: registered.client_id });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ error: 'invalid_client' });
    const basic = `Basic ${Buffer.from(`${registered.client_id}:${registered.client_secret}`).toString('base64')}`;
    // The failed attempt did not spend the code: client authentication comes first.
    const granted = await postForm(gw.url, '/oauth/token', form, { authorization: basic });
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    const revoked = await postForm(
      gw.url,
      '/oauth/revoke',
      { token: granted.body.refresh_token },
      { authorization: basic },
    );
    expect(revoked.status).toBe(200);
    const refresh = await postForm(
      gw.url,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: granted.body.refresh_token },
      { authorization: basic },
    );
    expect(refresh.body).toMatchObject({ error: 'invalid_grant' });
  });

  it('registration refuses what Calgate does not do, with the OAuth error names', async () => {
    const noRedirects = await registerClient(gw, { client_name: 'X' });
    expect(noRedirects.status).toBe(400);
    expect(noRedirects.body.error).toBe('invalid_redirect_uri');
    const implicit = await registerClient(gw, {
      redirect_uris: [callback.redirectUri],
      grant_types: ['implicit'],
    });
    expect(implicit.body.error).toBe('invalid_client_metadata');
    const plainHttp = await registerClient(gw, { redirect_uris: ['http://app.example/cb'] });
    expect(plainHttp.status).toBe(400);
    expect(plainHttp.body.error_description).toMatch(/http/);
  });

  it('access tokens are bound to this MCP URL and expire', async () => {
    const tokens = await tokensFor(ann, [{ calendarId: work, read: true, write: false }]);
    // Another gateway of the same install (same key, same database) under another URL.
    const port = await freePort();
    const elsewhere = await startTestGateway(
      {
        ...HIGH_RATE_LIMITS,
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        ENCRYPTION_KEY: encryptionKey,
        ALLOWED_ORIGINS: 'http://calgate.test',
        OAUTH_ACCESS_TOKEN_TTL_SECS: '1',
      },
      { db: gw.db },
    );
    try {
      const foreign = await rpc(
        elsewhere.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        {
          authorization: `Bearer ${tokens.access_token}`,
        },
      );
      expect(foreign.status).toBe(401);
      expect(foreign.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(((await foreign.json()) as Body).error.message).toMatch(/audience/);

      // A refresh token is bound to its resource too.
      const moved = await postForm(elsewhere.url, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: tokens.clientId,
        resource: elsewhere.mcpUrl,
      });
      expect(moved.body).toMatchObject({ error: 'invalid_grant' });

      // A token of that gateway works there for a second, then is expired.
      const short = {
        body: await tokensFor(ann, [{ calendarId: work, read: true, write: false }], elsewhere),
      };
      expect(short.body.expires_in).toBe(1);
      const call1 = await rpc(
        elsewhere.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        {
          authorization: `Bearer ${short.body.access_token}`,
        },
      );
      expect(call1.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const expired = await rpc(
        elsewhere.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        {
          authorization: `Bearer ${short.body.access_token}`,
        },
      );
      expect(expired.status).toBe(401);
      expect(((await expired.json()) as Body).error.message).toMatch(/expired/);
    } finally {
      await elsewhere.stop();
    }
  });
});
