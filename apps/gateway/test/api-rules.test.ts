import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, ORIGIN, sessionFor } from './api-client.ts';
import { HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';

const BERLIN = 'Europe/Berlin';
/** ISO week 10 of 2026: Monday 2 to Sunday 8 March, in Berlin (UTC+1). */
const WEEK = '2026-W10';
const RANGE = { timeMin: '2026-03-02', timeMax: '2026-03-08', timeZone: BERLIN };
const at = (day: number, time: string) => ({
  dateTime: `2026-03-0${2 + day}T${time}:00+01:00`,
  timeZone: BERLIN,
});

describe('/api/v1 projects, rules, preview, apply and timesheet', () => {
  let gw: TestGateway;
  let ann: Browser;
  let eve: Browser;
  let acme: string;
  let internal: string;
  let globexProject: string;
  let rule: string;

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    const tenant = await gw.seedTenant('Acme');
    const other = await gw.seedTenant('Globex');
    const work = await gw.localCalendar(tenant.tenantId, 'Work', BERLIN);
    const foreign = await gw.localCalendar(other.tenantId, 'Globex work', BERLIN);
    ann = await sessionFor(gw, tenant.tenantId);
    eve = await sessionFor(gw, other.tenantId);
    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    const on = (id: string) => ({ id, externalId: id, timeZone: BERLIN });
    const events = [
      {
        summary: 'Acme sync',
        start: at(0, '09:00'),
        end: at(0, '10:00'),
        attendees: [{ email: 'bob@acme.com' }],
      },
      { summary: 'Standup', start: at(0, '10:30'), end: at(0, '11:00') },
      { summary: 'Acme review', start: at(1, '14:00'), end: at(1, '15:30') },
      { summary: 'Standup', start: at(2, '09:00'), end: at(2, '10:00') },
    ];
    for (const event of events) {
      await provider.insertEvent(on(work), event);
    }
    await provider.insertEvent(on(foreign), {
      summary: 'Acme takeover (Globex only)',
      start: at(0, '12:00'),
      end: at(0, '13:00'),
    });
    const project = await call(gw, 'POST', '/api/v1/projects', {
      as: eve,
      body: { name: 'Globex internal' },
    });
    globexProject = project.body.project.id;
  });

  afterAll(async () => {
    await gw?.stop();
  });

  describe('.happy', () => {
    it('creates, lists, renames, archives and restores projects', async () => {
      const created = await call(gw, 'POST', '/api/v1/projects', {
        as: ann,
        body: { name: 'Acme', client: 'Acme Corp', colour: '#DC2626' },
      });
      expect(created.status).toBe(201);
      expect(created.body.project).toMatchObject({
        name: 'Acme',
        client: 'Acme Corp',
        colour: '#dc2626',
        archived: false,
      });
      acme = created.body.project.id;
      internal = (await call(gw, 'POST', '/api/v1/projects', { as: ann, body: { name: 'Internal' } })).body
        .project.id;

      const renamed = await call(gw, 'PATCH', `/api/v1/projects/${internal}`, {
        as: ann,
        body: { name: 'Internal work', client: 'Us' },
      });
      expect(renamed.body.project).toMatchObject({ name: 'Internal work', client: 'Us' });
      const cleared = await call(gw, 'PATCH', `/api/v1/projects/${internal}`, {
        as: ann,
        body: { client: null },
      });
      expect(cleared.body.project.client).toBeNull();

      const archived = await call(gw, 'PATCH', `/api/v1/projects/${internal}`, {
        as: ann,
        body: { archived: true },
      });
      expect(archived.body.project.archived).toBe(true);
      const live = await call(gw, 'GET', '/api/v1/projects', { as: ann });
      expect(live.body.projects.map((p: { name: string }) => p.name)).toEqual(['Acme']);
      const all = await call(gw, 'GET', '/api/v1/projects?includeArchived=true', { as: ann });
      expect(all.body.projects.map((p: { name: string }) => p.name).sort()).toEqual([
        'Acme',
        'Internal work',
      ]);
      await call(gw, 'PATCH', `/api/v1/projects/${internal}`, { as: ann, body: { archived: false } });
      expect((await call(gw, 'GET', '/api/v1/projects', { as: ann })).body.projects).toHaveLength(2);
    });

    it('previews a query over every calendar of the tenant: matches, count, truncation', async () => {
      const preview = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: ann,
        body: { query: 'title:acme', ...RANGE },
      });
      expect(preview.status).toBe(200);
      expect(preview.body.matchCount).toBe(2);
      expect(preview.body.truncated).toBe(false);
      expect(preview.body.matches.map((m: { summary: string }) => m.summary)).toEqual([
        'Acme sync',
        'Acme review',
      ]);
      expect(preview.body.matches[0].start).toEqual({ dateTime: '2026-03-02T09:00:00+01:00' });
      expect(preview.body.conflicts).toEqual([]);
      const cut = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: ann,
        body: { query: 'title:acme OR title:standup', maxResults: 1, ...RANGE },
      });
      expect(cut.body).toMatchObject({ matchCount: 4, truncated: true });
      expect(cut.body.matches).toHaveLength(1);
    });

    it('creates rules in the user’s name, lists, disables, edits and deletes them', async () => {
      const created = await call(gw, 'POST', '/api/v1/rules', {
        as: ann,
        body: { query: 'title:acme', projectId: acme, weight: 2 },
      });
      expect(created.status).toBe(201);
      expect(created.body.rule).toMatchObject({
        query: 'title:acme',
        projectId: acme,
        project: 'Acme',
        weight: 2,
        enabled: true,
        createdByUserId: ann.userId,
        createdByKeyId: null,
      });
      rule = created.body.rule.id;
      const extra = await call(gw, 'POST', '/api/v1/rules', {
        as: ann,
        body: { query: 'title:standup', projectId: internal },
      });
      const off = await call(gw, 'PATCH', `/api/v1/rules/${extra.body.rule.id}`, {
        as: ann,
        body: { enabled: false },
      });
      expect(off.body.rule.enabled).toBe(false);
      const edited = await call(gw, 'PATCH', `/api/v1/rules/${extra.body.rule.id}`, {
        as: ann,
        body: { query: 'title:"standup"', weight: 3 },
      });
      expect(edited.body.rule).toMatchObject({ query: 'title:"standup"', weight: 3, enabled: false });
      const list = await call(gw, 'GET', '/api/v1/rules', { as: ann });
      expect(list.body.rules.map((r: { query: string; project: string }) => [r.query, r.project])).toEqual([
        ['title:acme', 'Acme'],
        ['title:"standup"', 'Internal work'],
      ]);
      const deleted = await call(gw, 'DELETE', `/api/v1/rules/${extra.body.rule.id}`, { as: ann });
      expect(deleted.body.deleted.id).toBe(extra.body.rule.id);
      expect((await call(gw, 'GET', '/api/v1/rules', { as: ann })).body.rules).toHaveLength(1);
    });

    it('applies rules to a week and shows the filed time as conflicts of another project', async () => {
      const applied = await call(gw, 'POST', '/api/v1/rules/apply', { as: ann, body: { week: WEEK } });
      expect(applied.status).toBe(200);
      expect(applied.body).toMatchObject({ occurrences: 4, classified: 2, pending: 2, created: 4 });
      const again = await call(gw, 'POST', '/api/v1/rules/apply', { as: ann, body: RANGE });
      expect(again.body).toMatchObject({ occurrences: 4, created: 0, changed: 0, unchanged: 4 });

      const preview = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: ann,
        body: { query: 'title:sync', projectId: internal, weight: 5, ...RANGE },
      });
      expect(preview.body.conflictCount).toBe(1);
      expect(preview.body.conflicts[0]).toMatchObject({
        currentProject: acme,
        currentSource: 'rule',
        proposedProject: internal,
      });
      const replacing = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: ann,
        body: { query: 'title:sync', projectId: internal, ruleId: rule, ...RANGE },
      });
      expect(replacing.body.conflicts[0].proposedProject).toBe(internal);
      const tie = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: ann,
        body: { query: 'title:sync', projectId: internal, weight: 2, ...RANGE },
      });
      expect(tie.body.conflicts[0].proposedProject).toBeNull();
    });

    it('gives the weekly table: projects × days, Unclassified last, totals that add up', async () => {
      const { status, body } = await call(gw, 'GET', `/api/v1/timesheet?week=${WEEK}`, { as: ann });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        week: WEEK,
        timeZone: BERLIN,
        timeMin: '2026-03-02',
        timeMax: '2026-03-08',
      });
      expect(body.days).toEqual([
        '2026-03-02',
        '2026-03-03',
        '2026-03-04',
        '2026-03-05',
        '2026-03-06',
        '2026-03-07',
        '2026-03-08',
      ]);
      expect(
        body.rows.map((row: { project: string; hours: number[]; total: number }) => [
          row.project,
          row.hours,
          row.total,
        ]),
      ).toEqual([
        ['Acme', [1, 1.5, 0, 0, 0, 0, 0], 2.5],
        ['Internal work', [0, 0, 0, 0, 0, 0, 0], 0],
        ['Unclassified', [0.5, 0, 1, 0, 0, 0, 0], 1.5],
      ]);
      expect(body.rows[0]).toMatchObject({ projectId: acme, client: 'Acme Corp', colour: '#dc2626' });
      expect(body.dayTotals).toEqual([1.5, 1.5, 1, 0, 0, 0, 0]);
      expect(body.total).toBe(4);
      const range = await call(
        gw,
        'GET',
        '/api/v1/timesheet?timeMin=2026-03-03&timeMax=2026-03-04&timeZone=UTC',
        {
          as: ann,
        },
      );
      expect(range.body.days).toEqual(['2026-03-03', '2026-03-04']);
      expect(range.body.timeZone).toBe('UTC');
      expect(range.body.total).toBe(2.5);
    });

    it('downloads the timesheet as CSV', async () => {
      const response = await fetch(`${gw.url}/api/v1/timesheet.csv?week=${WEEK}`, {
        headers: { cookie: ann.cookie },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(response.headers.get('content-disposition')).toBe(
        `attachment; filename="calgate-timesheet-${WEEK}.csv"`,
      );
      expect(await response.text()).toBe(
        [
          'period,project,client,hours',
          '2026-03-02,Acme,Acme Corp,1.00',
          '2026-03-02,Unclassified,,0.50',
          '2026-03-03,Acme,Acme Corp,1.50',
          '2026-03-04,Unclassified,,1.00',
          '',
        ].join('\r\n'),
      );
    });
  });

  describe('.error', () => {
    it('a malformed query is a 400 naming its position, in preview and on save; nothing is stored', async () => {
      const preview = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: ann,
        body: { query: 'title:acme)', ...RANGE },
      });
      expect(preview.status).toBe(400);
      expect(preview.body.error.message).toContain('position 10');
      const unknown = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: ann,
        body: { query: 'subject:acme' },
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.message).toMatch(/position 0.*'title'/);
      const saved = await call(gw, 'POST', '/api/v1/rules', {
        as: ann,
        body: { query: 'title:"acme', projectId: acme },
      });
      expect(saved.status).toBe(400);
      expect(saved.body.error.message).toContain('position 6');
      const edited = await call(gw, 'PATCH', `/api/v1/rules/${rule}`, {
        as: ann,
        body: { query: '(title:acme' },
      });
      expect(edited.status).toBe(400);
      expect(edited.body.error.message).toMatch(/position \d+/);
      const list = await call(gw, 'GET', '/api/v1/rules', { as: ann });
      expect(list.body.rules.map((r: { query: string }) => r.query)).toEqual(['title:acme']);
    });

    it("reads AND as AND, refuses NOT pointing to '-', and warns of a query that matches nothing", async () => {
      const and = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: ann,
        body: { query: 'title:acme AND title:review', ...RANGE },
      });
      expect(and.body).toMatchObject({ matchCount: 1, matches: [{ summary: 'Acme review' }] });
      expect(and.body.warnings).toBeUndefined();
      const none = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: ann,
        body: { query: 'title:retro', ...RANGE },
      });
      expect(none.body.warnings).toEqual([
        { kind: 'no_matches', message: expect.stringContaining('matches no event from 2026-03-02') },
      ]);
      for (const [method, path] of [
        ['POST', '/api/v1/rules/preview'],
        ['POST', '/api/v1/rules'],
        ['PATCH', `/api/v1/rules/${rule}`],
      ] as const) {
        const refused = await call(gw, method, path, {
          as: ann,
          body: { query: 'title:acme not title:review', ...(method === 'POST' ? { projectId: acme } : {}) },
        });
        expect(refused.status, path).toBe(400);
        expect(refused.body.error.message).toContain(
          "'not' at position 11 is not an operator: use '-' to negate",
        );
      }
      const named = await call(gw, 'POST', '/api/v1/rules', {
        as: ann,
        body: { query: 'title:x', projectId: 'acme' },
      });
      expect(named.status).toBe(404);
      expect(named.body.error.message).toContain(`Did you mean '${acme}' (Acme)?`);
      const moved = await call(gw, 'PATCH', `/api/v1/rules/${rule}`, {
        as: ann,
        body: { projectId: 'Acme' },
      });
      expect(moved.status).toBe(404);
      const list = await call(gw, 'GET', '/api/v1/rules', { as: ann });
      expect(
        list.body.rules.map((r: { query: string; projectId: string }) => [r.query, r.projectId]),
      ).toEqual([['title:acme', acme]]);
    });

    it('refuses bad bodies and ranges with what to send instead', async () => {
      const colour = await call(gw, 'POST', '/api/v1/projects', {
        as: ann,
        body: { name: 'X', colour: 'red' },
      });
      expect(colour.status).toBe(400);
      expect(colour.body.error.message).toContain('colour: must be #RRGGBB');
      const duplicate = await call(gw, 'POST', '/api/v1/projects', { as: ann, body: { name: 'acme' } });
      expect(duplicate.status).toBe(409);
      const empty = await call(gw, 'PATCH', `/api/v1/rules/${rule}`, { as: ann, body: {} });
      expect(empty.status).toBe(400);
      const noRange = await call(gw, 'GET', '/api/v1/timesheet', { as: ann });
      expect(noRange.status).toBe(400);
      expect(noRange.body.error.message).toContain('give either week=YYYY-Www or both timeMin and timeMax');
      const badWeek = await call(gw, 'GET', '/api/v1/timesheet?week=2025-W53', { as: ann });
      expect(badWeek.status).toBe(400);
      expect(badWeek.body.error.message).toContain('2025 has no week 53');
      const week53 = await call(gw, 'GET', '/api/v1/timesheet?week=2026-W53', { as: ann });
      expect(week53.body).toMatchObject({ timeMin: '2026-12-28', timeMax: '2027-01-03' });
      const longWeek = await call(gw, 'GET', '/api/v1/timesheet?week=2026-W1', { as: ann });
      expect(longWeek.status).toBe(400);
      const apply = await call(gw, 'POST', '/api/v1/rules/apply', {
        as: ann,
        body: { timeMin: '2026-03-02' },
      });
      expect(apply.status).toBe(400);
      const missing = await call(gw, 'POST', '/api/v1/rules', {
        as: ann,
        body: { query: 'title:x', projectId: 'prj_nothing' },
      });
      expect(missing.status).toBe(404);
    });
  });

  describe('.security', () => {
    it('needs a session', async () => {
      for (const path of ['/api/v1/projects', '/api/v1/rules', `/api/v1/timesheet?week=${WEEK}`]) {
        expect((await call(gw, 'GET', path)).status).toBe(401);
      }
      expect((await fetch(`${gw.url}/api/v1/timesheet.csv?week=${WEEK}`)).status).toBe(401);
    });

    it('refuses writes without the CSRF token or from another origin, changing nothing', async () => {
      const attempts = [
        { method: 'POST', path: '/api/v1/projects', body: { name: 'Forged' } },
        { method: 'PATCH', path: `/api/v1/projects/${acme}`, body: { name: 'Forged' } },
        { method: 'POST', path: '/api/v1/rules', body: { query: 'title:x', projectId: acme } },
        { method: 'PATCH', path: `/api/v1/rules/${rule}`, body: { enabled: false } },
        { method: 'DELETE', path: `/api/v1/rules/${rule}` },
        { method: 'POST', path: '/api/v1/rules/preview', body: { query: 'title:acme' } },
        { method: 'POST', path: '/api/v1/rules/apply', body: { week: WEEK } },
      ];
      for (const { method, path, body } of attempts) {
        const noToken = await call(gw, method, path, { as: ann, body, headers: { 'x-calgate-csrf': '' } });
        expect(noToken.status, `${method} ${path} without CSRF`).toBe(403);
        const foreign = await call(gw, method, path, {
          as: ann,
          body,
          headers: { origin: 'https://evil.example' },
        });
        expect(foreign.status, `${method} ${path} from another origin`).toBe(403);
        const noOrigin = await fetch(`${gw.url}${path}`, {
          method,
          headers: {
            cookie: ann.cookie,
            'x-calgate-csrf': ann.csrf,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        expect(noOrigin.status, `${method} ${path} without Origin`).toBe(403);
      }
      expect(ORIGIN).toBe('http://calgate.test');
      const projects = await call(gw, 'GET', '/api/v1/projects', { as: ann });
      expect(projects.body.projects.map((p: { name: string }) => p.name)).toEqual(['Acme', 'Internal work']);
      const rules = await call(gw, 'GET', '/api/v1/rules', { as: ann });
      expect(rules.body.rules).toMatchObject([{ id: rule, enabled: true }]);
    });

    it('another tenant’s ids are 404 and its calendars never show', async () => {
      const steps = [
        await call(gw, 'PATCH', `/api/v1/projects/${acme}`, { as: eve, body: { name: 'Mine' } }),
        await call(gw, 'PATCH', `/api/v1/projects/${acme}`, { as: eve, body: { archived: true } }),
        await call(gw, 'PATCH', `/api/v1/rules/${rule}`, { as: eve, body: { enabled: false } }),
        await call(gw, 'DELETE', `/api/v1/rules/${rule}`, { as: eve }),
        await call(gw, 'POST', '/api/v1/rules', { as: eve, body: { query: 'title:x', projectId: acme } }),
        await call(gw, 'POST', '/api/v1/rules/preview', {
          as: eve,
          body: { query: 'title:acme', projectId: acme, ...RANGE },
        }),
        await call(gw, 'POST', '/api/v1/rules/preview', {
          as: eve,
          body: { query: 'title:acme', ruleId: rule, ...RANGE },
        }),
        await call(gw, 'PATCH', `/api/v1/projects/${globexProject}`, { as: ann, body: { name: 'Mine' } }),
      ];
      expect(steps.map((step) => step.status)).toEqual([404, 404, 404, 404, 404, 404, 404, 404]);
      expect((await call(gw, 'GET', '/api/v1/rules', { as: eve })).body.rules).toEqual([]);
      expect((await call(gw, 'GET', '/api/v1/projects', { as: eve })).body.projects).toMatchObject([
        { name: 'Globex internal' },
      ]);

      const theirs = await call(gw, 'POST', '/api/v1/rules/preview', {
        as: eve,
        body: { query: 'title:acme', ...RANGE },
      });
      expect(theirs.body.matches.map((m: { summary: string }) => m.summary)).toEqual([
        'Acme takeover (Globex only)',
      ]);
      const sheet = await call(gw, 'GET', `/api/v1/timesheet?week=${WEEK}`, { as: eve });
      expect(sheet.body.rows).toEqual([
        expect.objectContaining({ project: 'Globex internal', total: 0 }),
        expect.objectContaining({ project: 'Unclassified', total: 1 }),
      ]);
      const ours = await call(gw, 'GET', '/api/v1/rules', { as: ann });
      expect(ours.body.rules).toMatchObject([{ id: rule, enabled: true, project: 'Acme' }]);
    });
  });
});
