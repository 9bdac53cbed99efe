import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Body, type Browser, call, sessionFor } from './api-client.ts';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';

describe('/api/v1/audit', () => {
  let gw: TestGateway;
  let acme: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let ann: Browser;
  let eve: Browser;
  let calendar: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    acme = await gw.seedTenant('Acme');
    const globex = await gw.seedTenant('Globex');
    calendar = await gw.localCalendar(acme.tenantId, 'Work');
    await gw.grant(acme.tenantId, acme.keyId, calendar, { read: true, write: false });
    ann = await sessionFor(gw, acme.tenantId);
    eve = await sessionFor(gw, globex.tenantId);
    const client = await connectClient(gw.mcpUrl, acme.secret);
    await client.callTool({ name: 'list_calendars', arguments: {} });
    await client.callTool({
      name: 'list_events',
      arguments: { calendarId: calendar, timeMin: '2026-01-01T00:00:00Z' },
    });
    await client.callTool({ name: 'list_events', arguments: { calendarId: 'cal_nope' } });
    await client.close();
    const other = await connectClient(gw.mcpUrl, globex.secret);
    await other.callTool({ name: 'list_calendars', arguments: {} });
    await other.close();
    await gw.runtime.deps.audit.flush();
  });

  afterAll(async () => {
    await gw?.stop();
  });

  describe('.happy', () => {
    it("lists this tenant's calls newest first with key, tool, calendars, outcome and latency", async () => {
      const { status, body } = await call(gw, 'GET', '/api/v1/audit', { as: ann });
      expect(status).toBe(200);
      expect(body.entries.map((entry: Body) => entry.tool)).toEqual([
        'list_events',
        'list_events',
        'list_calendars',
      ]);
      const [failed, listed] = body.entries;
      expect(failed).toMatchObject({ outcome: 'denied', key: { id: acme.keyId, name: 'agent' } });
      expect(failed.key.prefix).toMatch(/^cg_live_/);
      expect(listed).toMatchObject({ outcome: 'ok', calendarIds: [calendar], errorCode: null });
      expect(typeof listed.latencyMs).toBe('number');
      expect(Date.parse(listed.at)).not.toBeNaN();
      expect(body.nextCursor).toBeNull();
    });

    it('filters by tool, outcome and key, and pages with a cursor', async () => {
      const byTool = await call(gw, 'GET', '/api/v1/audit?tool=list_calendars', { as: ann });
      expect(byTool.body.entries).toHaveLength(1);
      const byOutcome = await call(gw, 'GET', '/api/v1/audit?outcome=ok', { as: ann });
      expect(byOutcome.body.entries.map((entry: Body) => entry.outcome)).toEqual(['ok', 'ok']);
      const byKey = await call(gw, 'GET', `/api/v1/audit?keyId=${acme.keyId}`, { as: ann });
      expect(byKey.body.entries).toHaveLength(3);
      const first = await call(gw, 'GET', '/api/v1/audit?limit=2', { as: ann });
      expect(first.body.entries).toHaveLength(2);
      expect(first.body.nextCursor).toBe(first.body.entries[1].id);
      const second = await call(gw, 'GET', `/api/v1/audit?limit=2&before=${first.body.nextCursor}`, {
        as: ann,
      });
      expect(second.body.entries.map((entry: Body) => entry.tool)).toEqual(['list_calendars']);
    });
  });

  describe('.error', () => {
    it('names a wrong filter', async () => {
      const outcome = await call(gw, 'GET', '/api/v1/audit?outcome=maybe', { as: ann });
      expect(outcome.status).toBe(400);
      expect(outcome.body.error.message).toContain("outcome must be 'ok', 'error' or 'denied'");
      const limit = await call(gw, 'GET', '/api/v1/audit?limit=5000', { as: ann });
      expect(limit.body.error.message).toContain('limit is at most 200');
      const before = await call(gw, 'GET', '/api/v1/audit?before=yesterday', { as: ann });
      expect(before.body.error.message).toContain('before is the nextCursor of the previous page');
      const unknown = await call(gw, 'GET', '/api/v1/audit?user=x', { as: ann });
      expect(unknown.status).toBe(400);
    });
  });

  describe('.security', () => {
    it('needs a session and never shows another tenant', async () => {
      expect((await call(gw, 'GET', '/api/v1/audit')).status).toBe(401);
      const theirs = await call(gw, 'GET', '/api/v1/audit', { as: eve });
      expect(theirs.body.entries).toHaveLength(1);
      expect(JSON.stringify(theirs.body)).not.toContain(acme.keyId);
      const peek = await call(gw, 'GET', `/api/v1/audit?keyId=${acme.keyId}`, { as: eve });
      expect(peek.body.entries).toEqual([]);
    });
  });
});
