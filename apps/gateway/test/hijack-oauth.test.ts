/**
 * The hijack guard for apps connected through OAuth (hosted MCP clients that hold Calgate's access
 * tokens, not API keys): each connection has its own policy, chosen on the consent page and
 * changed under Connected apps, and the guard applies it to that app's calls: ask (the default)
 * asks through elicitation, strict sends the person to the dashboard even when the client could
 * be asked, off checks nothing. A change applies to the app's next call, with the token it
 * already holds; every change and decision is audited. The official SDK client over real HTTP.
 */
import { freePort } from '@calgate/testkit';
import {
  Client,
  type ElicitRequest,
  type ElicitResult,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, sessionFor } from './api-client.ts';
import { type InvitedCalendar, seedInvitedCalendar } from './exposure-fixture.ts';
import { HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { approveApp, authorize, type Callback, consentRequest, pkce, startCallback } from './oauth-flow.ts';

describe('hijack policy per OAuth-connected app (official SDK client, real HTTP)', () => {
  let gw: TestGateway;
  let callback: Callback;
  let ann: Browser;
  let tenantId: string;
  let calendarId: string;
  const clients: Client[] = [];
  let home: InvitedCalendar;

  beforeAll(async () => {
    // Access tokens are bound to the MCP URL under PUBLIC_URL: serve it where the client calls.
    const port = await freePort();
    gw = await startTestGateway({
      ...HIGH_RATE_LIMITS,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ALLOWED_ORIGINS: 'http://calgate.test',
    });
    callback = await startCallback();
    home = await seedInvitedCalendar(gw);
    ({ tenantId, calendarId } = home);
    ann = await sessionFor(gw, tenantId);
  });

  afterAll(async () => {
    for (const client of clients) {
      await client.close();
    }
    await callback?.close();
    await gw?.stop();
  });

  /** An app the person approves on the consent page (with Write on Home), and its connection id. */
  async function connectApp(hijackPolicy?: string) {
    const { clientId, tokens } = await approveApp(gw, ann, callback, {
      calendars: [{ calendarId, read: true, write: true }],
      ...(hijackPolicy === undefined ? {} : { hijackPolicy }),
    });
    const apps = (await call(gw, 'GET', '/api/v1/connected-apps', { as: ann })).body.apps as {
      id: string;
      clientId: string;
      hijackPolicy: string;
    }[];
    const app = apps.find((item) => item.clientId === clientId);
    if (app === undefined) {
      throw new Error('the approved app is not listed');
    }
    return { clientId, appId: app.id, listedPolicy: app.hijackPolicy, token: tokens.access_token };
  }

  /** The official SDK client with the app's access token, declaring forms and answering with `answer`. */
  async function mcpClient(token: string, answer: () => ElicitResult, seen: ElicitRequest['params'][]) {
    const client = new Client(
      { name: 'hosted-app', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      seen.push(request.params);
      return answer();
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gw.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  }

  const remove = (client: Client, eventId: string) =>
    client.callTool({ name: 'delete_event', arguments: { calendarId, eventId } });

  async function confirmationsOf(appId: string): Promise<string[]> {
    await gw.runtime.deps.audit.flush();
    const { rows } = await gw.db.pool.query<{ tool: string }>(
      "SELECT tool FROM audit_log WHERE key_id = $1 AND tool LIKE 'confirmation.%' ORDER BY id",
      [appId],
    );
    return rows.map((row) => row.tool);
  }

  it('an app approved without a choice asks (the default): the form comes over its OAuth connection', async () => {
    const { appId, listedPolicy, token } = await connectApp();
    expect(listedPolicy).toBe('ask');
    const seen: ElicitRequest['params'][] = [];
    const client = await mcpClient(token, () => ({ action: 'accept', content: { allow: true } }), seen);
    await home.readInvitation(client);
    const eventId = await home.addEvent('Gym', 7);
    const result = await remove(client, eventId);
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await home.exists(eventId)).toBe(false);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.message).toContain(`delete event ${eventId} in calendar 'Home' (${calendarId})`);
    expect(seen[0]?.message).toContain('description addresses an AI assistant');
    expect(await confirmationsOf(appId)).toEqual(['confirmation.asked', 'confirmation.accepted']);
  });

  it('strict chosen on the consent page sends even an eliciting app to the dashboard; approving again shows it', async () => {
    const { clientId, appId, listedPolicy, token } = await connectApp('strict');
    expect(listedPolicy).toBe('strict');
    const seen: ElicitRequest['params'][] = [];
    const client = await mcpClient(token, () => ({ action: 'accept', content: { allow: true } }), seen);
    await home.readInvitation(client);
    const eventId = await home.addEvent('Standup', 9);
    const refused = await remove(client, eventId);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(
      `delete_event was not run: "delete event ${eventId} in calendar 'Home' (${calendarId})" needs the person's confirmation`,
    );
    expect(textOf(refused)).toContain('Confirm in the Calgate dashboard or repeat with confirmation');
    expect(seen).toEqual([]);
    expect(await home.exists(eventId)).toBe(true);
    expect(await confirmationsOf(appId)).toEqual(['confirmation.refused']);
    // The person approves it in the dashboard, where the app is named; the app repeats the call once.
    const id = /confirmation: "(cnf_[A-Za-z0-9]+)"/.exec(textOf(refused))?.[1] as string;
    const waiting = await call(gw, 'GET', '/api/v1/confirmations', { as: ann });
    expect(waiting.body.confirmations).toEqual([
      expect.objectContaining({ id, keyId: appId, keyName: 'Test Agent', tool: 'delete_event' }),
    ]);
    expect((await call(gw, 'POST', `/api/v1/confirmations/${id}/approve`, { as: ann })).status).toBe(200);
    const repeated = await client.callTool({
      name: 'delete_event',
      arguments: { calendarId, eventId, confirmation: id },
    });
    expect(repeated.isError, textOf(repeated)).toBeFalsy();
    expect(await home.exists(eventId)).toBe(false);
    expect(await confirmationsOf(appId)).toEqual(['confirmation.refused', 'confirmation.used']);

    // The consent page, opened again for the same app, starts from the connection's policy.
    const { challenge } = pkce();
    const started = await authorize(gw, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callback.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: gw.mcpUrl,
    });
    const request = consentRequest(started.location);
    const page = await call(gw, 'GET', `/api/v1/oauth/consent?${new URLSearchParams({ request })}`, {
      as: ann,
    });
    expect(page.status).toBe(200);
    expect(page.body.hijackPolicy).toBe('strict');
    const bad = await call(gw, 'POST', '/api/v1/oauth/consent', {
      as: ann,
      body: { request, decision: 'allow', calendars: [], hijackPolicy: 'lax' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('use one of strict, ask, off');

    await gw.runtime.deps.audit.flush();
    const { rows } = await gw.db.pool.query<{ target: string[] }>(
      "SELECT target FROM audit_log WHERE kind = 'dashboard' AND tool = 'connected_app.approve' AND outcome = 'ok' ORDER BY id",
    );
    expect(rows.map((row) => row.target)).toEqual([[], ['hijackPolicy=strict']]);
  });

  it("a change under Connected apps applies to the app's next call with the token it holds; other apps keep theirs", async () => {
    const off = await connectApp();
    const other = await connectApp();
    const seenOff: ElicitRequest['params'][] = [];
    const seenOther: ElicitRequest['params'][] = [];
    const offClient = await mcpClient(off.token, () => ({ action: 'decline' }), seenOff);
    const otherClient = await mcpClient(other.token, () => ({ action: 'decline' }), seenOther);
    await home.readInvitation(offClient);
    await home.readInvitation(otherClient);

    const first = await home.addEvent('Review', 10);
    expect((await remove(offClient, first)).isError).toBe(true);
    expect(seenOff).toHaveLength(1);
    expect(await home.exists(first)).toBe(true);

    const changed = await call(gw, 'PATCH', `/api/v1/connected-apps/${off.appId}`, {
      as: ann,
      body: { hijackPolicy: 'off' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.app.hijackPolicy).toBe('off');
    const gone = await remove(offClient, first);
    expect(gone.isError, textOf(gone)).toBeFalsy();
    expect(await home.exists(first)).toBe(false);
    expect(seenOff).toHaveLength(1);

    // The other app of the same person and tenant still asks, and its person declines.
    const kept = await home.addEvent('Retro', 11);
    const declined = await remove(otherClient, kept);
    expect(declined.isError).toBe(true);
    expect(textOf(declined)).toContain('the person did not allow');
    expect(seenOther).toHaveLength(1);
    expect(await home.exists(kept)).toBe(true);

    // Back to strict: the same token is refused without a form.
    expect(
      (
        await call(gw, 'PATCH', `/api/v1/connected-apps/${off.appId}`, {
          as: ann,
          body: { hijackPolicy: 'strict' },
        })
      ).status,
    ).toBe(200);
    const refused = await remove(offClient, kept);
    expect(textOf(refused)).toContain('Confirm in the Calgate dashboard or repeat with confirmation');
    expect(seenOff).toHaveLength(1);
    expect(await home.exists(kept)).toBe(true);

    expect(await confirmationsOf(off.appId)).toEqual([
      'confirmation.asked',
      'confirmation.declined',
      'confirmation.refused',
    ]);
    await gw.runtime.deps.audit.flush();
    const { rows } = await gw.db.pool.query<{ actor_user_id: string; target: string[] }>(
      "SELECT actor_user_id, target FROM audit_log WHERE kind = 'dashboard' AND tool = 'connected_app.update' ORDER BY id",
    );
    expect(rows).toEqual([
      { actor_user_id: ann.userId, target: [off.appId, 'hijackPolicy=off'] },
      { actor_user_id: ann.userId, target: [off.appId, 'hijackPolicy=strict'] },
    ]);
  });
});
