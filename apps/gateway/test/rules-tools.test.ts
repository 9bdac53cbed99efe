import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

type Out = Record<string, unknown>;
interface Line {
  period?: string;
  projectId: string | null;
  project: string;
  hours: number;
}

const BERLIN = 'Europe/Berlin';
/** Monday 23 November 2026 to Friday 27, in Berlin. */
const WEEK = { timeMin: '2026-11-23', timeMax: '2026-11-27', timeZone: BERLIN };
const at = (day: number, time: string) => ({
  dateTime: `2026-11-${23 + day}T${time}:00+01:00`,
  timeZone: BERLIN,
});

describe('rules tools over MCP: projects, rules, preview, apply, classify, timesheet, grants', () => {
  let gw: TestGateway;
  let tenantId: string;
  let work: string;
  let secret: string;
  /** Read and write on Work, the rules toolset; cannot read Secret. */
  let agent: Client;
  /** Read and write on Secret only. */
  let other: Client;
  /** Read only on Work. */
  let reader: Client;
  const ids: Record<string, string> = {};
  const projects: Record<string, string> = {};

  async function call(client: Client, name: string, args: Out): Promise<Out> {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return result.structuredContent as Out;
  }

  async function failure(client: Client, name: string, args: Out): Promise<string> {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name} should fail`).toBe(true);
    return textOf(result);
  }

  async function keyFor(name: string, grants: { calendarId: string; read: boolean; write: boolean }[]) {
    const { key, secret: token } = await gw.runtime.keys.create(tenantId, {
      name,
      toolsets: ['calendar', 'rules'],
    });
    for (const grant of grants) {
      await gw.grant(tenantId, key.id, grant.calendarId, grant);
    }
    return connectClient(gw.mcpUrl, token);
  }

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    const tenant = await gw.seedTenant('Rules');
    tenantId = tenant.tenantId;
    work = await gw.localCalendar(tenantId, 'Work', BERLIN);
    secret = await gw.localCalendar(tenantId, 'Secret', BERLIN);
    await gw.runtime.keys.setDefaults(tenantId, tenant.keyId, { toolsets: ['calendar', 'rules'] });
    await gw.grant(tenantId, tenant.keyId, work, { read: true, write: true });
    agent = await connectClient(gw.mcpUrl, tenant.secret);
    other = await keyFor('other', [{ calendarId: secret, read: true, write: true }]);
    reader = await keyFor('reader', [{ calendarId: work, read: true, write: false }]);

    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    const on = (calendarId: string) => ({ id: calendarId, externalId: calendarId, timeZone: BERLIN });
    const add = async (
      key: string,
      calendarId: string,
      event: Parameters<typeof provider.insertEvent>[1],
    ) => {
      ids[key] = (await provider.insertEvent(on(calendarId), event)).id;
    };
    await add('sync', work, {
      summary: 'Acme weekly sync',
      start: at(0, '09:00'),
      end: at(0, '10:00'),
      attendees: [{ email: 'bob@acme.com' }],
    });
    await add('planning', work, {
      summary: 'Acme planning',
      start: at(0, '09:30'),
      end: at(0, '11:00'),
      attendees: [{ email: 'ann@acme.com' }],
    });
    await add('declined', work, {
      summary: 'Acme offsite',
      start: at(0, '13:00'),
      end: at(0, '15:00'),
      attendees: [
        { email: 'dan@acme.com' },
        { email: 'me@work.test', self: true, responseStatus: 'declined' },
      ],
    });
    await add('review', work, {
      summary: 'Globex review',
      start: at(1, '14:00'),
      end: at(1, '15:00'),
      attendees: [{ email: 'x@globex.com' }],
    });
    await add('lunch', work, { summary: 'Lunch', start: at(1, '12:00'), end: at(1, '13:00') });
    await add('dentist', work, { summary: 'Dentist', start: at(3, '10:00'), end: at(3, '11:00') });
    await add('standup', work, {
      summary: 'Daily standup',
      start: at(0, '08:00'),
      end: at(0, '08:15'),
      recurrence: ['RRULE:FREQ=DAILY;COUNT=5'],
    });
    await add('merger', secret, {
      summary: 'Acme merger (confidential)',
      start: at(0, '15:00'),
      end: at(0, '17:00'),
      attendees: [{ email: 'ceo@acme.com' }],
    });
  });

  afterAll(async () => {
    for (const client of [agent, other, reader]) {
      await client?.close().catch(() => {});
    }
    await gw?.stop();
  });

  it('creates and lists projects; a duplicate name is refused', async () => {
    for (const name of ['Acme', 'Globex', 'Internal']) {
      const { project } = (await call(agent, 'create_project', { name, client: `${name} Corp` })) as {
        project: { id: string; name: string; colour: string };
      };
      expect(project.id).toMatch(/^prj_/);
      expect(project.colour).toMatch(/^#[0-9a-f]{6}$/);
      projects[name] = project.id;
    }
    expect(await failure(agent, 'create_project', { name: 'acme' })).toContain('already exists');
    const { projects: listed } = (await call(agent, 'list_projects', {})) as { projects: { name: string }[] };
    expect(listed.map((project) => project.name)).toEqual(['Acme', 'Globex', 'Internal']);
  });

  it('previews a query: matches on readable calendars only, truncation, and errors with their position', async () => {
    const preview = await call(agent, 'preview_rule', { query: 'domain:acme.com', ...WEEK });
    const matches = preview.matches as { calendarId: string; eventId: string; summary: string; start: Out }[];
    expect(matches.map((match) => match.summary)).toEqual([
      'Acme weekly sync',
      'Acme planning',
      'Acme offsite',
    ]);
    expect(matches.every((match) => match.calendarId === work)).toBe(true);
    expect(matches[0]?.start).toEqual({ dateTime: '2026-11-23T09:00:00+01:00' });
    expect(preview).toMatchObject({ matchCount: 3, truncated: false, conflicts: [] });
    expect(JSON.stringify(preview)).not.toContain('merger');

    const short = await call(agent, 'preview_rule', { query: 'domain:acme.com', ...WEEK, maxResults: 1 });
    expect(short).toMatchObject({ matchCount: 3, truncated: true });
    expect(short.matches).toHaveLength(1);

    const standups = await call(agent, 'preview_rule', { query: 'title:stand*', ...WEEK });
    expect(standups.matchCount).toBe(5);

    expect(await failure(agent, 'preview_rule', { query: 'subject:acme' })).toContain(
      "Unknown property 'subject' at position 0. Did you mean",
    );
    expect(await failure(agent, 'preview_rule', { query: 'title:acme (domain:a.com' })).toMatch(
      /position 24/,
    );
    expect(await failure(agent, 'preview_rule', { query: 'time-of-day:25:00' })).toContain('position 12');
    expect(await failure(agent, 'preview_rule', { query: 'acme', projectId: 'prj_missing' })).toContain(
      'No project prj_missing',
    );
    expect(await failure(agent, 'preview_rule', { query: 'acme', calendarIds: [secret] })).toContain(
      'was not found',
    );
  });

  it('saves rules (raw and from conditions), updates, lists and deletes them', async () => {
    expect(await failure(agent, 'create_rule', { query: 'title:"open', projectId: projects.Acme })).toContain(
      'position 6',
    );
    expect(await failure(agent, 'create_rule', { query: 'title:x', projectId: 'prj_missing' })).toContain(
      'No project prj_missing',
    );
    const acme = (await call(agent, 'create_rule', {
      query: 'domain:acme.com',
      projectId: projects.Acme,
    })) as {
      rule: { id: string; project: string; weight: number; enabled: boolean };
    };
    expect(acme.rule).toMatchObject({ project: 'Acme', weight: 1, enabled: true });
    ids.acmeRule = acme.rule.id;

    const globex = await call(agent, 'create_classification_rule', {
      projectId: projects.Globex,
      conditions: [
        { property: 'domain', value: 'globex.com' },
        { property: 'title', value: 'weekly sync', negated: true },
      ],
      logic: 'AND',
    });
    expect(globex.query).toBe('domain:globex.com -title:"weekly sync"');
    expect(globex.rule).toMatchObject({ project: 'Globex', query: globex.query });

    const internal = (
      await call(agent, 'create_rule', { query: 'title:standup', projectId: projects.Internal })
    ).rule as { id: string };
    const updated = await call(agent, 'update_rule', { ruleId: internal.id, weight: 3, enabled: false });
    expect(updated.rule).toMatchObject({ weight: 3, enabled: false });
    expect(await failure(agent, 'update_rule', { ruleId: internal.id })).toContain('Nothing to change');
    expect(await failure(agent, 'update_rule', { ruleId: internal.id, query: 'title:' })).toContain(
      'position',
    );
    await call(agent, 'update_rule', { ruleId: internal.id, enabled: true });

    const scratch = (await call(agent, 'create_rule', { query: 'lunch', projectId: projects.Internal }))
      .rule as {
      id: string;
    };
    const deleted = await call(agent, 'delete_rule', { ruleId: scratch.id });
    expect(deleted.deleted).toMatchObject({ id: scratch.id, query: 'lunch' });
    expect(await failure(agent, 'delete_rule', { ruleId: scratch.id })).toContain('No rule');

    const all = (await call(agent, 'list_rules', {})).rules as { query: string }[];
    expect(all.map((rule) => rule.query)).toEqual(['domain:acme.com', globex.query, 'title:standup']);
    const ofAcme = (await call(agent, 'list_rules', { projectId: projects.Acme })).rules as { id: string }[];
    expect(ofAcme.map((rule) => rule.id)).toEqual([ids.acmeRule]);
  });

  it('applies the rules per occurrence, keeps manual filings, and reports what changed', async () => {
    // Another key files the Secret calendar's events with the tenant's shared rules.
    const elsewhere = await call(other, 'apply_rules', WEEK);
    expect(elsewhere).toMatchObject({ occurrences: 1, classified: 1, created: 1 });

    const first = await call(agent, 'apply_rules', WEEK);
    expect(first).toMatchObject({
      occurrences: 11,
      classified: 9,
      pending: 2,
      needsReview: 0,
      created: 11,
      changed: 0,
      keptManual: 0,
    });
    const changes = first.changes as {
      eventId: string;
      summary: string;
      before: null;
      after: string | null;
    }[];
    expect(changes.find((change) => change.eventId === ids.sync)).toMatchObject({
      summary: 'Acme weekly sync',
      before: null,
      after: projects.Acme,
    });
    expect(changes.filter((change) => change.after === projects.Internal)).toHaveLength(5);
    expect(changes.some((change) => change.eventId === ids.merger)).toBe(false);

    const manual = await call(agent, 'classify_event', {
      calendarId: work,
      eventId: ids.lunch,
      projectId: projects.Globex,
    });
    expect(manual).toMatchObject({ eventId: ids.lunch, projectId: projects.Globex, source: 'manual' });
    expect(await failure(agent, 'classify_event', { calendarId: work, eventId: ids.lunch })).toContain(
      'either projectId or skip',
    );

    const again = await call(agent, 'apply_rules', WEEK);
    expect(again).toMatchObject({ occurrences: 11, created: 0, changed: 0, unchanged: 10, keptManual: 1 });
    expect(again.changes).toEqual([]);
  });

  it('shows conflicts: matches already filed elsewhere, with what rules would then decide', async () => {
    const preview = await call(agent, 'preview_rule', {
      query: 'domain:acme.com OR title:lunch',
      projectId: projects.Globex,
      ...WEEK,
    });
    const conflicts = preview.conflicts as Out[];
    expect(conflicts).toHaveLength(3);
    expect(conflicts).toContainEqual({
      calendarId: work,
      eventId: ids.sync,
      currentProject: projects.Acme,
      currentSource: 'rule',
      proposedProject: null,
    });
    expect(JSON.stringify(conflicts)).not.toContain(ids.lunch);
    expect(JSON.stringify(preview)).not.toContain(ids.merger);

    const manual = await call(agent, 'preview_rule', {
      query: 'title:lunch',
      projectId: projects.Acme,
      ...WEEK,
    });
    expect(manual.conflicts).toEqual([
      {
        calendarId: work,
        eventId: ids.lunch,
        currentProject: projects.Globex,
        currentSource: 'manual',
        proposedProject: projects.Globex,
      },
    ]);
  });

  it('totals hours per project per day from readable calendars, unclassified apart', async () => {
    const summary = await call(agent, 'get_time_summary', { ...WEEK, groupBy: 'day' });
    const lines = summary.lines as Line[];
    const hours = (period: string, project: string) =>
      lines.find((line) => line.period === period && line.project === project)?.hours;
    expect(hours('2026-11-23', 'Acme')).toBe(2);
    expect(hours('2026-11-23', 'Internal')).toBe(0.25);
    expect(hours('2026-11-24', 'Globex')).toBe(2);
    expect(hours('2026-11-26', 'Unclassified')).toBe(1);
    expect(lines.find((line) => line.project === 'Unclassified')?.projectId).toBeNull();
    expect(summary.totals).toEqual([
      { projectId: projects.Acme, project: 'Acme', hours: 2 },
      { projectId: projects.Globex, project: 'Globex', hours: 2 },
      { projectId: projects.Internal, project: 'Internal', hours: 1.25 },
      { projectId: null, project: 'Unclassified', hours: 1 },
    ]);
    expect(summary.excluded).toEqual({ declined: 1, allDay: 0, skipped: 0 });
    expect(summary).toMatchObject({ timeZone: BERLIN, timeMin: '2026-11-23T00:00:00+01:00' });

    const withDeclined = await call(agent, 'get_time_summary', {
      ...WEEK,
      groupBy: 'project',
      includeDeclined: true,
    });
    expect((withDeclined.lines as Line[]).find((line) => line.project === 'Acme')?.hours).toBe(4);

    await call(agent, 'classify_event', { calendarId: work, eventId: ids.dentist, skip: true });
    const skipped = await call(agent, 'get_time_summary', { ...WEEK, groupBy: 'week' });
    expect(skipped.excluded).toMatchObject({ skipped: 1 });
    expect((skipped.lines as Line[]).map((line) => [line.period, line.project])).toEqual([
      ['2026-W48', 'Acme'],
      ['2026-W48', 'Globex'],
      ['2026-W48', 'Internal'],
    ]);
  });

  it('serves the syntax reference and the timesheet as resources', async () => {
    const { resources } = await agent.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual([
      'calgate://docs/tools',
      'calgate://docs/rules-syntax',
      `calgate://calendars/${work}`,
    ]);
    const { resourceTemplates } = await agent.listResourceTemplates();
    expect(resourceTemplates[0]?.uriTemplate).toBe(
      'calgate://timesheet.csv{?timeMin,timeMax,groupBy,timeZone,calendarIds}',
    );
    const doc = await agent.readResource({ uri: 'calgate://docs/rules-syntax' });
    expect(doc.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    expect((doc.contents[0] as { text: string }).text).toContain('time-of-day');

    const csv = await agent.readResource({
      uri: 'calgate://timesheet.csv?timeMin=2026-11-23&timeMax=2026-11-27&groupBy=project&timeZone=Europe/Berlin',
    });
    expect(csv.contents[0]).toMatchObject({ mimeType: 'text/csv' });
    expect((csv.contents[0] as { text: string }).text).toBe(
      'project,client,hours\r\nAcme,Acme Corp,2.00\r\nGlobex,Globex Corp,2.00\r\nInternal,Internal Corp,1.25\r\n',
    );
    await expect(agent.readResource({ uri: 'calgate://timesheet.csv?timeMin=2026-11-23' })).rejects.toThrow(
      /timeMax/,
    );
    await expect(agent.readResource({ uri: 'calgate://nothing' })).rejects.toThrow(/Unknown resource/);
  });

  it('never reveals an event of a calendar the key cannot read', async () => {
    // The other key sees its own calendar's occurrence filed under the shared Acme rule.
    const theirs = await call(other, 'get_time_summary', { ...WEEK, groupBy: 'project' });
    expect(theirs.totals).toEqual([{ projectId: projects.Acme, project: 'Acme', hours: 2 }]);
    const theirPreview = await call(other, 'preview_rule', { query: 'domain:acme.com', ...WEEK });
    expect(theirPreview).toMatchObject({
      matchCount: 1,
      conflicts: [{ eventId: ids.merger, currentProject: projects.Acme, currentSource: 'rule' }],
    });
    expect(JSON.stringify(theirPreview)).not.toContain(ids.sync);

    // The agent's answers hold nothing of it: not in matches, counts, conflicts or totals.
    const preview = await call(agent, 'preview_rule', { query: 'acme', projectId: projects.Globex, ...WEEK });
    expect(preview.matchCount).toBe(3);
    expect(JSON.stringify(preview)).not.toMatch(/merger|confidential/i);
    const totals = (await call(agent, 'get_time_summary', { ...WEEK, groupBy: 'project' })).totals as Line[];
    expect(totals.find((line) => line.project === 'Acme')?.hours).toBe(2);
    const csv = await agent.readResource({
      uri: 'calgate://timesheet.csv?timeMin=2026-11-23&timeMax=2026-11-27',
    });
    expect((csv.contents[0] as { text: string }).text).not.toContain('4.00');
    const applied = await call(agent, 'apply_rules', WEEK);
    expect(applied.occurrences).toBe(11);
    expect(
      await failure(agent, 'classify_event', { calendarId: secret, eventId: ids.merger, skip: true }),
    ).toContain('was not found');
    expect(await failure(agent, 'apply_rules', { ...WEEK, calendarIds: [secret] })).toContain(
      'was not found',
    );
  });

  it('a read-only key reads and previews but is refused every write', async () => {
    const names = (await reader.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['preview_rule', 'list_rules', 'list_projects', 'get_time_summary']),
    );
    for (const name of [
      'create_rule',
      'create_classification_rule',
      'update_rule',
      'delete_rule',
      'create_project',
      'classify_event',
      'apply_rules',
    ]) {
      expect(names).not.toContain(name);
    }
    expect((await call(reader, 'preview_rule', { query: 'domain:acme.com', ...WEEK })).matchCount).toBe(3);
    const refusals = [
      await failure(reader, 'create_rule', { query: 'title:x', projectId: projects.Acme }),
      await failure(reader, 'create_project', { name: 'Sneaky' }),
      await failure(reader, 'apply_rules', WEEK),
      await failure(reader, 'classify_event', { calendarId: work, eventId: ids.sync, skip: true }),
      await failure(reader, 'delete_rule', { ruleId: ids.acmeRule }),
    ];
    for (const refusal of refusals) {
      expect(refusal).toMatch(/needs Write on at least one calendar/);
    }
    const rules = (await call(reader, 'list_rules', {})).rules as unknown[];
    expect(rules).toHaveLength(3);
    const listed = (await call(reader, 'list_projects', {})).projects as { name: string }[];
    expect(listed.map((project) => project.name)).not.toContain('Sneaky');
  });
});
