import {
  Client,
  type ElicitRequest,
  type ElicitResult,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, sessionFor } from './api-client.ts';
import {
  ALLOWED,
  at,
  type InvitedCalendar,
  modernCall,
  postModern,
  seedInvitedCalendar,
} from './exposure-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

type Answer = (request: ElicitRequest['params']) => ElicitResult;

/** The official SDK client declaring form elicitation, answering every form with `answer`. */
async function askingClient(mcpUrl: string, secret: string, answer: Answer, seen: ElicitRequest['params'][]) {
  const client = new Client(
    { name: 'asking-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    seen.push(request.params);
    return answer(request.params);
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${secret}` } },
    }),
  );
  return client;
}

describe('risky actions after suspicious content need the person (official SDK client, real HTTP)', () => {
  let gw: TestGateway;
  let tenantId: string;
  let calendarId: string;
  let flaggedId: string;
  let owner: Browser;
  let home: InvitedCalendar;
  const clients: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    gw = await startTestGateway();
    home = await seedInvitedCalendar(gw);
    ({ tenantId, calendarId, invitationId: flaggedId } = home);
    await gw.db.pool.query(
      "INSERT INTO users (id, tenant_id, email) VALUES ('usr_ann', $1, 'ann@acme.test')",
      [tenantId],
    );
    owner = await sessionFor(gw, tenantId);
  });

  afterAll(async () => {
    for (const client of clients) {
      await client.close();
    }
    await gw?.stop();
  });

  async function auditOf(keyId: string): Promise<{ tool: string; outcome: string; target: string[] }[]> {
    await gw.runtime.deps.audit.flush();
    const { rows } = await gw.db.pool.query(
      "SELECT tool, outcome, target FROM audit_log WHERE key_id = $1 AND tool LIKE 'confirmation.%' ORDER BY id",
      [keyId],
    );
    return rows;
  }

  const remove = (client: Client, eventId: string, extra: Record<string, unknown> = {}) =>
    client.callTool({ name: 'delete_event', arguments: { calendarId, eventId, ...extra } });

  it('asks nobody when the agent was shown nothing suspicious', async () => {
    const { keyId, secret } = await home.newKey('quiet');
    const seen: ElicitRequest['params'][] = [];
    const client = await askingClient(gw.mcpUrl, secret, () => ({ action: 'decline' }), seen);
    clients.push(client);
    const eventId = await home.addEvent('Gym', 7);
    const result = await remove(client, eventId);
    expect(result.isError).toBeFalsy();
    expect(await home.exists(eventId)).toBe(false);
    expect(seen).toEqual([]);
    expect(await auditOf(keyId)).toEqual([]);
  });

  it('asks through elicitation after a flagged read, and an accepted form lets the action run', async () => {
    const { keyId, secret } = await home.newKey('accepting');
    const seen: ElicitRequest['params'][] = [];
    const client = await askingClient(
      gw.mcpUrl,
      secret,
      () => ({ action: 'accept', content: { allow: true } }),
      seen,
    );
    clients.push(client);
    await home.readInvitation(client);
    const eventId = await home.addEvent('Dentist', 8);
    const result = await remove(client, eventId, { scope: 'all' });
    expect(textOf(result)).not.toMatch(/not run/);
    expect(result.isError).toBeFalsy();
    expect(await home.exists(eventId)).toBe(false);
    expect(seen).toHaveLength(1);
    const message = seen[0]?.message ?? '';
    expect(message).toContain(
      `delete event ${eventId} (the whole series) in calendar 'Home' (${calendarId})`,
    );
    expect(message).toContain('tool delete_event');
    expect(message).toContain(`event ${flaggedId}`);
    expect(message).toContain('description addresses an AI assistant');
    expect(message).not.toContain('ignore your previous instructions');
    expect(await auditOf(keyId)).toEqual([
      { tool: 'confirmation.asked', outcome: 'ok', target: ['tool=delete_event'] },
      { tool: 'confirmation.accepted', outcome: 'ok', target: ['tool=delete_event'] },
    ]);
  });

  it('refuses with a relayable message when the person declines the form, and changes nothing', async () => {
    const { keyId, secret } = await home.newKey('declining');
    const seen: ElicitRequest['params'][] = [];
    const client = await askingClient(gw.mcpUrl, secret, () => ({ action: 'decline' }), seen);
    clients.push(client);
    await home.readInvitation(client);
    const eventId = await home.addEvent('Standup', 9);
    const result = await remove(client, eventId);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `delete_event was not run: the person did not allow "delete event ${eventId} in calendar 'Home' (${calendarId})" when Calgate asked, because this agent was recently shown content that may carry instructions. Do not retry; tell the person it was not done.`,
    );
    expect(await home.exists(eventId)).toBe(true);
    expect(seen).toHaveLength(1);
    // A form accepted without ticking "allow" is no permission either.
    const unticked = await askingClient(
      gw.mcpUrl,
      secret,
      () => ({ action: 'accept', content: { allow: false } }),
      seen,
    );
    clients.push(unticked);
    expect((await remove(unticked, eventId)).isError).toBe(true);
    expect(await home.exists(eventId)).toBe(true);
    expect((await auditOf(keyId)).map((row) => row.tool)).toEqual([
      'confirmation.asked',
      'confirmation.declined',
      'confirmation.asked',
      'confirmation.declined',
    ]);
  });

  it('without elicitation refuses, and a dashboard approval lets exactly that call run once', async () => {
    const { keyId, secret } = await home.newKey('plain');
    const client = await connectClient(gw.mcpUrl, secret);
    clients.push(client);
    await home.readInvitation(client);
    const eventId = await home.addEvent('Board meeting', 10);
    const other = await home.addEvent('Lunch', 12);
    const refused = await remove(client, eventId);
    expect(refused.isError).toBe(true);
    const text = textOf(refused);
    const id = /confirmation: "(cnf_[A-Za-z0-9]+)"/.exec(text)?.[1] as string;
    expect(id).toBeDefined();
    expect(text).toMatch(
      new RegExp(
        `^delete_event was not run: "delete event ${eventId} in calendar 'Home' \\(${calendarId}\\)" needs the person's confirmation, because this agent was recently shown calendar content that may carry instructions \\(event ${flaggedId} in calendar 'Home' \\(${calendarId}\\) \\(shown by list_events\\): description addresses an AI assistant\\)\\. Confirm in the Calgate dashboard or repeat with confirmation: ask the person to approve ${id} in the Calgate dashboard \\(http://calgate\\.test/keys, under "Waiting for confirmation"\\), then repeat exactly the same call with the extra argument confirmation: "${id}"\\. It works once, for this call only, until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\.$`,
      ),
    );
    expect(await home.exists(eventId)).toBe(true);

    // The agent cannot skip the person: before approval the id does nothing.
    const early = await remove(client, eventId, { confirmation: id });
    expect(textOf(early)).toBe(
      `delete_event was not run: confirmation ${id} has not been approved in the Calgate dashboard yet. Ask the person to approve it there, then repeat the call with it.`,
    );
    // Nor can its key approve through the dashboard API.
    const byKey = await call(gw, 'POST', `/api/v1/confirmations/${id}/approve`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(byKey.status).toBe(401);

    const listed = await call(gw, 'GET', '/api/v1/confirmations', { as: owner });
    expect(listed.status).toBe(200);
    const waiting = listed.body.confirmations.find((row: { id: string }) => row.id === id);
    expect(waiting).toMatchObject({
      keyId,
      keyName: 'plain',
      tool: 'delete_event',
      action: `delete event ${eventId} in calendar 'Home' (${calendarId})`,
      status: 'pending',
    });
    expect(JSON.stringify(waiting)).not.toContain('ignore your previous instructions');
    const approved = await call(gw, 'POST', `/api/v1/confirmations/${id}/approve`, { as: owner });
    expect(approved.status).toBe(200);
    expect(approved.body.confirmation.status).toBe('approved');

    // Bound to the arguments: another event is refused and the confirmation stays unused.
    const elsewhere = await remove(client, other, { confirmation: id });
    expect(textOf(elsewhere)).toContain(`confirmation ${id} was given for a different call`);
    expect(await home.exists(other)).toBe(true);

    const done = await remove(client, eventId, { confirmation: id });
    expect(done.isError).toBeFalsy();
    expect(await home.exists(eventId)).toBe(false);

    // One use only.
    const again = await remove(client, other, { confirmation: id });
    expect(again.isError).toBe(true);
    const twice = await client.callTool({
      name: 'delete_event',
      arguments: { calendarId, eventId, confirmation: id },
    });
    expect(textOf(twice)).toBe(
      `delete_event was not run: confirmation ${id} was already used, and each confirmation works for one call only. Repeat the call without it to ask the person again.`,
    );
    expect(await auditOf(keyId)).toEqual([
      { tool: 'confirmation.refused', outcome: 'denied', target: ['tool=delete_event', id] },
      { tool: 'confirmation.used', outcome: 'ok', target: ['tool=delete_event', id] },
    ]);
    const { rows } = await gw.db.pool.query(
      "SELECT tool, target, actor_user_id FROM audit_log WHERE kind = 'dashboard' AND tool LIKE 'confirmation.%'",
    );
    expect(rows).toEqual([{ tool: 'confirmation.approve', target: [id], actor_user_id: owner.userId }]);
    // The refused calls themselves are recorded as denied, with why.
    const calls = await gw.db.pool.query(
      "SELECT outcome, error_code FROM audit_log WHERE key_id = $1 AND tool = 'delete_event' ORDER BY id",
      [keyId],
    );
    expect(
      calls.rows.map(
        (row: { outcome: string; error_code: string | null }) => `${row.outcome} ${row.error_code}`,
      ),
    ).toEqual([
      'denied confirmation_required',
      'denied confirmation_required',
      'denied confirmation_required',
      'ok null',
      'denied confirmation_required',
      'denied confirmation_required',
    ]);
    // The audit page filters on the decisions like on tools and actions.
    const filtered = await call(
      gw,
      'GET',
      `/api/v1/audit?tool=confirmation.refused,confirmation.used&actor=${keyId}`,
      {
        as: owner,
      },
    );
    expect(filtered.status).toBe(200);
    expect(filtered.body.entries.map((row: { tool: string }) => row.tool).sort()).toEqual([
      'confirmation.refused',
      'confirmation.used',
    ]);
    const facets = await call(gw, 'GET', '/api/v1/audit/facets', { as: owner });
    expect(facets.body.actions).toEqual(
      expect.arrayContaining(['confirmation.asked', 'confirmation.approve']),
    );
  });

  it('a declined dashboard confirmation stays refused', async () => {
    const { secret } = await home.newKey('declined-in-dashboard');
    const client = await connectClient(gw.mcpUrl, secret);
    clients.push(client);
    await home.readInvitation(client);
    const eventId = await home.addEvent('Review', 14);
    const id = /confirmation: "(cnf_[A-Za-z0-9]+)"/.exec(
      textOf(await remove(client, eventId)),
    )?.[1] as string;
    expect((await call(gw, 'POST', `/api/v1/confirmations/${id}/decline`, { as: owner })).status).toBe(200);
    expect((await call(gw, 'POST', `/api/v1/confirmations/${id}/approve`, { as: owner })).status).toBe(409);
    const result = await remove(client, eventId, { confirmation: id });
    expect(textOf(result)).toContain('the person declined confirmation');
    expect(await home.exists(eventId)).toBe(true);
  });

  it('invites outside the organisation only with confirmation; colleagues need none', async () => {
    const { secret } = await home.newKey('inviting');
    const client = await connectClient(gw.mcpUrl, secret);
    clients.push(client);
    await home.readInvitation(client);
    const event = (start: number) => ({
      calendarId,
      summary: 'Sync',
      start: { dateTime: at(2, start) },
      end: { dateTime: at(2, start + 1) },
    });
    const inside = await client.callTool({
      name: 'create_event',
      arguments: { ...event(9), attendees: ['bob@acme.test'] },
    });
    expect(inside.isError).toBeFalsy();
    const outside = await client.callTool({
      name: 'create_event',
      arguments: { ...event(11), attendees: ['bob@acme.test', 'mallory@evil.test'] },
    });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toContain(
      `"invite mallory@evil.test (outside your organisation) to a new event in calendar 'Home' (${calendarId})"`,
    );
  });

  it('policy strict sends even an eliciting client to the dashboard; off checks nothing; both audited', async () => {
    const strict = await home.newKey('strict');
    const changed = await call(gw, 'PATCH', `/api/v1/keys/${strict.keyId}`, {
      as: owner,
      body: { hijackPolicy: 'strict' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.key.hijackPolicy).toBe('strict');
    const bad = await call(gw, 'PATCH', `/api/v1/keys/${strict.keyId}`, {
      as: owner,
      body: { hijackPolicy: 'lax' },
    });
    expect(bad.status).toBe(400);
    const seen: ElicitRequest['params'][] = [];
    const asking = await askingClient(
      gw.mcpUrl,
      strict.secret,
      () => ({ action: 'accept', content: { allow: true } }),
      seen,
    );
    clients.push(asking);
    await home.readInvitation(asking);
    const kept = await home.addEvent('Strict', 15);
    const refused = await remove(asking, kept);
    expect(textOf(refused)).toContain('Confirm in the Calgate dashboard or repeat with confirmation');
    expect(seen).toEqual([]);
    expect(await home.exists(kept)).toBe(true);

    const off = await home.newKey('off');
    expect(
      (await call(gw, 'PATCH', `/api/v1/keys/${off.keyId}`, { as: owner, body: { hijackPolicy: 'off' } }))
        .status,
    ).toBe(200);
    const plain = await connectClient(gw.mcpUrl, off.secret);
    clients.push(plain);
    await home.readInvitation(plain);
    const gone = await home.addEvent('Off', 16);
    expect((await remove(plain, gone)).isError).toBeFalsy();
    expect(await home.exists(gone)).toBe(false);
    expect(await auditOf(off.keyId)).toEqual([]);
    await gw.runtime.deps.audit.flush();
    const { rows } = await gw.db.pool.query(
      "SELECT target FROM audit_log WHERE kind = 'dashboard' AND tool = 'key.update' ORDER BY id",
    );
    expect(rows.map((row: { target: string[] }) => row.target)).toEqual([
      [strict.keyId, 'hijackPolicy=strict'],
      [strict.keyId, 'hijackPolicy=lax'],
      [off.keyId, 'hijackPolicy=off'],
    ]);
  });

  /** The v2 SDK client pinned to 2026-07-28, declaring forms when `answer` is given. */
  async function modernClient(secret: string, answer?: Answer, seen: ElicitRequest['params'][] = []) {
    const client = new Client(
      { name: 'modern-client', version: '1.0.0' },
      {
        ...(answer === undefined ? {} : { capabilities: { elicitation: { form: {} } } }),
        versionNegotiation: { mode: { pin: '2026-07-28' } },
      },
    );
    if (answer !== undefined) {
      client.setRequestHandler('elicitation/create', async (request) => {
        seen.push(request.params);
        return answer(request.params);
      });
    }
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gw.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${secret}` } },
      }),
    );
    clients.push(client);
    expect(client.getProtocolEra()).toBe('modern');
    return client;
  }

  it('asks a 2026-07-28 client that declares forms through input_required; an accepted form runs the call once', async () => {
    const { keyId, secret } = await home.newKey('modern accepting');
    const seen: ElicitRequest['params'][] = [];
    const client = await modernClient(secret, () => ({ action: 'accept', content: { allow: true } }), seen);
    await home.readInvitation(client);
    const eventId = await home.addEvent('Standup', 12);
    const result = await remove(client, eventId);
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(await home.exists(eventId)).toBe(false);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.message).toContain(`delete event ${eventId}`);
    expect(seen[0]?.message).toContain(`event ${flaggedId}`);
    expect(seen[0]?.message).not.toContain('ignore your previous instructions');
    expect(await auditOf(keyId)).toEqual([
      { tool: 'confirmation.asked', outcome: 'ok', target: ['tool=delete_event'] },
      { tool: 'confirmation.accepted', outcome: 'ok', target: ['tool=delete_event'] },
    ]);
  });

  it('a 2026-07-28 person who declines the input_required form gets a relayable refusal; nothing changes', async () => {
    const { keyId, secret } = await home.newKey('modern declining');
    const seen: ElicitRequest['params'][] = [];
    const client = await modernClient(secret, () => ({ action: 'decline' }), seen);
    await home.readInvitation(client);
    const eventId = await home.addEvent('Review', 13);
    const result = await remove(client, eventId);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^delete_event was not run: the person did not allow "delete event /);
    expect(textOf(result)).toContain('Do not retry; tell the person it was not done.');
    expect(seen).toHaveLength(1);
    expect(await home.exists(eventId)).toBe(true);
    expect(await auditOf(keyId)).toEqual([
      { tool: 'confirmation.asked', outcome: 'ok', target: ['tool=delete_event'] },
      { tool: 'confirmation.declined', outcome: 'denied', target: ['tool=delete_event'] },
    ]);
  });

  it('an answer without the state Calgate gave, or for other arguments, is asked again (raw 2026-07-28 requests)', async () => {
    const { secret } = await home.newKey('modern forging');
    const client = await modernClient(secret, () => ({ action: 'decline' }));
    await home.readInvitation(client);
    const eventId = await home.addEvent('Kept', 14);
    const send = (id: number, args: Record<string, unknown>, extra: Record<string, unknown>) =>
      postModern(gw.mcpUrl, secret, modernCall('delete_event', args, extra), id);
    const allow = { inputResponses: ALLOWED };
    const args = { calendarId, eventId };
    // Answered without being asked: asked.
    const forged = await send(1, args, allow);
    expect(forged.resultType).toBe('input_required');
    const state = forged.requestState as string;
    expect(forged.inputRequests).toMatchObject({
      confirm: { method: 'elicitation/create', params: { requestedSchema: { required: ['allow'] } } },
    });
    // The state of another call (another event) does not carry over.
    const other = await home.addEvent('Other', 15);
    const moved = await send(2, { calendarId, eventId: other }, { ...allow, requestState: state });
    expect(moved.resultType).toBe('input_required');
    // A tampered state neither.
    const tampered = await send(3, args, { ...allow, requestState: `${state.slice(0, -2)}xx` });
    expect(tampered.resultType).toBe('input_required');
    expect(await home.exists(eventId)).toBe(true);
    expect(await home.exists(other)).toBe(true);
    // The retry of exactly the call that asked, with the state it was given, runs.
    const done = await send(4, args, { ...allow, requestState: state });
    expect(done.resultType).toBe('complete');
    expect(done.isError).toBeFalsy();
    expect(await home.exists(eventId)).toBe(false);
  });

  it('refuses a 2026-07-28 client that declares no forms with the dashboard confirmation', async () => {
    const { secret } = await home.newKey('modern');
    const client = await modernClient(secret);
    const listed = await client.callTool({
      name: 'list_events',
      arguments: { calendarId, timeMin: at(-1, 0), timeMax: at(3, 0) },
    });
    expect(listed.isError).toBeFalsy();
    const eventId = await home.addEvent('Retro', 11);
    const refused = await client.callTool({ name: 'delete_event', arguments: { calendarId, eventId } });
    expect(refused.isError).toBe(true);
    const id = /confirmation: "(cnf_[A-Za-z0-9]+)"/.exec(textOf(refused))?.[1] as string;
    expect(id).toBeDefined();
    expect(await home.exists(eventId)).toBe(true);
    expect((await call(gw, 'POST', `/api/v1/confirmations/${id}/approve`, { as: owner })).status).toBe(200);
    const done = await client.callTool({
      name: 'delete_event',
      arguments: { calendarId, eventId, confirmation: id },
    });
    expect(done.isError, textOf(done)).toBeFalsy();
    expect(await home.exists(eventId)).toBe(false);
  });
});
