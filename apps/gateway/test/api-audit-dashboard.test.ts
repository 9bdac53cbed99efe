import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, type Browser, call, ORIGIN, sessionFor, uniqueEmail } from './api-client.ts';
import { rpc, startTestGateway, type TestGateway } from './harness.ts';

const PASSWORD = 'correct horse battery staple 1';
const NEW_PASSWORD = 'tr0ub4dor and three more words';
/** A key name a spreadsheet would run as a formula, with a quote and a comma to escape. */
const FORMULA_NAME = '=HYPERLINK("http://evil.test","x")';

/** A tools/call as an MCP client sends it, with its own User-Agent. */
async function toolCall(gw: TestGateway, secret: string, userAgent: string): Promise<void> {
  const response = await rpc(
    gw.mcpUrl,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_calendars', arguments: {} } },
    { authorization: `Bearer ${secret}`, 'user-agent': userAgent },
  );
  expect(response.status).toBe(200);
}

/** Parses RFC 4180 CSV (quoted cells, doubled quotes, CRLF) into rows of cells. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (char === '"') {
        quoted = false;
      } else {
        cell += char;
      }
    } else if (char === '"') {
      quoted = true;
    } else if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 1;
    } else {
      cell += char;
    }
  }
  return rows;
}

describe('/api/v1/audit with dashboard actions', () => {
  let gw: TestGateway;
  let ann: Browser;
  let eve: Browser;
  let calendar: string;
  let revokedKey: string;
  let formulaKey: string;
  const secrets: string[] = [];
  const startedAt = new Date();

  async function csv(query: string): Promise<{ status: number; text: string; headers: Headers }> {
    const response = await fetch(`${gw.url}/api/v1/audit.csv${query}`, { headers: { cookie: ann.cookie } });
    return { status: response.status, text: await response.text(), headers: response.headers };
  }

  async function entries(query: string): Promise<Body[]> {
    const { status, body } = await call(gw, 'GET', `/api/v1/audit${query}`, { as: ann });
    expect(status, JSON.stringify(body)).toBe(200);
    return body.entries;
  }

  beforeAll(async () => {
    gw = await startTestGateway();
    const email = uniqueEmail('owner');
    const signUp = await call(gw, 'POST', '/api/v1/auth/signup', {
      body: { email, password: PASSWORD, tenantName: 'Acme' },
    });
    expect(signUp.status).toBe(201);
    ann = {
      cookie: (signUp.headers.get('set-cookie') ?? '').split(';')[0] as string,
      csrf: signUp.body.csrfToken,
      tenantId: signUp.body.tenant.id,
      userId: signUp.body.user.id,
    };
    eve = await sessionFor(gw, (await gw.seedTenant('Globex')).tenantId);
    calendar = await gw.localCalendar(ann.tenantId, 'Work');

    const created = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: 'laptop' } });
    expect(created.status).toBe(201);
    revokedKey = created.body.key.id;
    secrets.push(created.body.secret);
    const grant = await call(gw, 'PUT', '/api/v1/grants', {
      as: ann,
      body: { keyId: revokedKey, calendarId: calendar, read: true, write: true },
    });
    expect(grant.status).toBe(200);
    const bulk = await call(gw, 'POST', '/api/v1/grants/bulk', {
      as: ann,
      body: { calendarId: calendar, access: 'read' },
    });
    expect(bulk.status).toBe(200);
    const rotated = await call(gw, 'POST', `/api/v1/keys/${revokedKey}/rotate`, { as: ann, body: {} });
    expect(rotated.status).toBe(201);
    secrets.push(rotated.body.secret);
    await toolCall(gw, rotated.body.secret, 'claude-code/2.1.0 (linux; x64)');
    expect((await call(gw, 'POST', `/api/v1/keys/${revokedKey}/revoke`, { as: ann })).status).toBe(200);

    const formula = await call(gw, 'POST', '/api/v1/keys', { as: ann, body: { name: FORMULA_NAME } });
    formulaKey = formula.body.key.id;
    secrets.push(formula.body.secret);
    await toolCall(gw, formula.body.secret, '-probe/1.0');

    // A failing action: its error text is kept.
    const missing = await call(gw, 'POST', '/api/v1/grants/bulk', {
      as: ann,
      body: { keyId: 'key_gone', access: 'read' },
    });
    expect(missing.status).toBe(404);
    // A wrong password for a known email, then a password change (and one whose body is not JSON).
    const wrong = await call(gw, 'POST', '/api/v1/auth/signin', {
      body: { email, password: 'guess-me-not-123' },
    });
    expect(wrong.status).toBe(401);
    const broken = await fetch(`${gw.url}/api/v1/account/password`, {
      method: 'POST',
      headers: {
        cookie: ann.cookie,
        origin: ORIGIN,
        'x-calgate-csrf': ann.csrf,
        'content-type': 'application/json',
      },
      body: `{"currentPassword":"${PASSWORD}","newPassword":"${NEW_PASSWORD}`,
    });
    expect(broken.status).toBe(400);
    const changed = await call(gw, 'POST', '/api/v1/account/password', {
      as: ann,
      body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBeLessThan(300);
    await gw.runtime.deps.audit.flush();
  });

  afterAll(async () => {
    await gw?.stop();
  });

  describe('.happy', () => {
    it('records key and grant changes with their actor and target, beside the tool calls', async () => {
      const all = await entries('');
      const names = all.map((entry: Body) => entry.tool);
      expect(names).toEqual(
        expect.arrayContaining([
          'auth.signup',
          'key.create',
          'grant.set',
          'grants.bulk',
          'key.rotate',
          'key.revoke',
        ]),
      );
      const revoke = all.find((entry: Body) => entry.tool === 'key.revoke');
      expect(revoke).toMatchObject({
        kind: 'dashboard',
        actor: { kind: 'user', id: ann.userId },
        target: [revokedKey],
        outcome: 'ok',
        errorMessage: null,
      });
      expect(revoke.actor.name).toMatch(/^owner-/);
      const grant = all.find((entry: Body) => entry.tool === 'grant.set');
      expect(grant.target).toEqual([revokedKey, calendar, 'read=true', 'write=true']);
      const bulk = all.find((entry: Body) => entry.tool === 'grants.bulk' && entry.outcome === 'ok');
      expect(bulk.target).toEqual([calendar, 'access=read']);
      const call = all.find(
        (entry: Body) => entry.tool === 'list_calendars' && entry.actor.id === revokedKey,
      );
      expect(call).toMatchObject({
        kind: 'tool',
        clientName: 'claude-code/2.1.0',
        actor: { kind: 'key', name: 'laptop' },
      });
    });

    it('keeps the error text of a failed action and a denied sign-in of a known person', async () => {
      const [failed] = await entries('?tool=grants.bulk&outcome=error');
      expect(failed.errorMessage).toBe('No API key or connected app key_gone in this tenant.');
      expect(failed.target).toEqual(['key_gone', 'access=read']);
      const [denied] = await entries('?outcome=denied');
      expect(denied).toMatchObject({
        tool: 'auth.signin',
        actor: { id: ann.userId },
        errorMessage: 'HTTP 401',
      });
    });

    it('opens one row with its request id, error text, client name and latency', async () => {
      const [row] = await entries(`?actor=${formulaKey}`);
      const { status, body } = await call(gw, 'GET', `/api/v1/audit/${row.id}`, { as: ann });
      expect(status).toBe(200);
      expect(body.entry).toMatchObject({
        id: row.id,
        tool: 'list_calendars',
        clientName: '-probe/1.0',
        clientAddress: '127.0.0.1',
      });
      expect(body.entry.requestId).toMatch(/^req_/);
      expect(typeof body.entry.latencyMs).toBe('number');
    });

    it('filters by actor, by a list of tools and actions, by outcome and by date range', async () => {
      const byUser = await entries(`?actor=${ann.userId}`);
      expect(byUser.length).toBeGreaterThan(5);
      expect(byUser.every((entry: Body) => entry.kind === 'dashboard')).toBe(true);
      const byKey = await entries(`?actor=${revokedKey}`);
      expect(byKey.map((entry: Body) => entry.tool)).toEqual(['list_calendars']);
      const byCommas = await entries('?tool=key.revoke,grant.set');
      expect(byCommas.map((entry: Body) => entry.tool).sort()).toEqual(['grant.set', 'key.revoke']);
      const repeated = await entries('?tool=key.revoke&tool=list_calendars');
      expect(repeated.map((entry: Body) => entry.tool).sort()).toEqual([
        'key.revoke',
        'list_calendars',
        'list_calendars',
      ]);
      const ok = await entries('?outcome=ok&tool=grants.bulk');
      expect(ok).toHaveLength(1);
      const within = await entries(
        `?from=${encodeURIComponent(startedAt.toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
      );
      expect(within.length).toBe((await entries('')).length);
      expect(await entries(`?to=${encodeURIComponent(startedAt.toISOString())}`)).toEqual([]);
      expect(await entries('?from=2099-01-01T00:00:00Z')).toEqual([]);
      const legacy = await entries(`?keyId=${formulaKey}`);
      expect(legacy).toHaveLength(1);
    });

    it('lists the actors and the tools and actions for the filter lists', async () => {
      const { body } = await call(gw, 'GET', '/api/v1/audit/facets', { as: ann });
      expect(body.actors.users).toEqual([expect.objectContaining({ id: ann.userId, kind: 'user' })]);
      expect(body.actors.keys.map((key: Body) => key.id)).toEqual(
        expect.arrayContaining([revokedKey, formulaKey]),
      );
      expect(body.tools).toContain('list_events');
      expect(body.actions).toEqual(
        expect.arrayContaining(['key.revoke', 'grant.set', 'grants.bulk', 'member.invite']),
      );
    });

    it('exports the filtered log as CSV, quoted and safe from formulas', async () => {
      const { status, text, headers } = await csv('');
      expect(status).toBe(200);
      expect(headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(headers.get('content-disposition')).toMatch(/^attachment; filename="calgate-audit-.*\.csv"$/);
      const rows = parseCsv(text);
      const header = rows[0] as string[];
      // The columns in order: a consumer reading by position keeps working as columns are added
      // at the end (client_address came last).
      expect(header).toEqual([
        'id',
        'at',
        'kind',
        'actor_kind',
        'actor_id',
        'actor_name',
        'tool_or_action',
        'target',
        'calendar_ids',
        'outcome',
        'error_code',
        'error_message',
        'latency_ms',
        'request_id',
        'client_name',
        'client_address',
      ]);
      expect(rows.length - 1).toBe((await entries('?limit=200')).length);
      const col = (name: string) => header.indexOf(name);
      const formulaCall = rows.find((row) => row[col('actor_id')] === formulaKey) as string[];
      expect(formulaCall[col('actor_name')]).toBe(`'${FORMULA_NAME}`);
      expect(formulaCall[col('client_name')]).toBe("'-probe/1.0");
      expect(formulaCall[col('client_address')]).toBe('127.0.0.1');
      // The raw text quotes the cell and doubles its quotes.
      expect(text).toContain(`"'=HYPERLINK(""http://evil.test"",""x"")"`);
      for (const row of rows.slice(1)) {
        for (const cell of row) {
          expect(cell).not.toMatch(/^[=+\-@]/);
        }
      }
      const filtered = parseCsv((await csv(`?tool=key.revoke&actor=${ann.userId}`)).text);
      expect(filtered).toHaveLength(2);
      expect(filtered[1]?.[col('target')]).toBe(revokedKey);
    });

    it('never stores a key secret or a password, in any column of any row', async () => {
      const { rows } = await gw.db.pool.query<{ row: string }>(
        'SELECT row_to_json(a)::text AS row FROM audit_log a',
      );
      expect(rows.length).toBeGreaterThan(10);
      const table = rows.map((row) => row.row).join('\n');
      expect(secrets).toHaveLength(3);
      for (const secret of [...secrets, PASSWORD, NEW_PASSWORD, 'guess-me-not-123']) {
        expect(table).not.toContain(secret);
      }
      // A body that is not JSON is refused before any route runs, so it changed nothing and
      // left no row (its parser's message quotes the body); the real change is recorded.
      const changes = rows.map((row) => JSON.parse(row.row)).filter((row) => row.tool === 'account.password');
      expect(changes.map((row) => [row.outcome, row.actor_user_id])).toEqual([['ok', ann.userId]]);
    });
  });

  describe('.error', () => {
    it('names a wrong filter', async () => {
      const tool = await call(gw, 'GET', '/api/v1/audit?tool=list_calendars,drop_tables', { as: ann });
      expect(tool.status).toBe(400);
      expect(tool.body.error.message).toContain("no tool or dashboard action named 'drop_tables'");
      const from = await call(gw, 'GET', '/api/v1/audit?from=yesterday', { as: ann });
      expect(from.body.error.message).toContain('RFC 3339');
      const range = await call(gw, 'GET', '/api/v1/audit?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', {
        as: ann,
      });
      expect(range.body.error.message).toContain('from must be before to');
      expect((await csv('?outcome=maybe')).status).toBe(400);
      const row = await call(gw, 'GET', '/api/v1/audit/abc', { as: ann });
      expect(row.status).toBe(400);
    });
  });

  describe('.security', () => {
    it("needs a session and never shows another tenant's rows", async () => {
      expect((await fetch(`${gw.url}/api/v1/audit.csv`)).status).toBe(401);
      expect((await call(gw, 'GET', '/api/v1/audit/facets')).status).toBe(401);
      const [row] = await entries('?tool=key.revoke');
      const peek = await call(gw, 'GET', `/api/v1/audit/${row.id}`, { as: eve });
      expect(peek.status).toBe(404);
      const theirs = await call(gw, 'GET', `/api/v1/audit?actor=${ann.userId}`, { as: eve });
      expect(theirs.body.entries).toEqual([]);
      const exported = await fetch(`${gw.url}/api/v1/audit.csv`, { headers: { cookie: eve.cookie } });
      expect(await exported.text()).not.toContain(ann.userId);
    });

    it('does not record writes without a session', async () => {
      const before = (await entries('?limit=200')).length;
      expect((await call(gw, 'POST', `/api/v1/keys/${formulaKey}/revoke`)).status).toBe(401);
      await gw.runtime.deps.audit.flush();
      expect((await entries('?limit=200')).length).toBe(before);
    });
  });
});
