import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

type Out = Record<string, unknown>;
interface Warning {
  kind: string;
  message: string;
}

const BERLIN = 'Europe/Berlin';
/** Monday 23 November 2026 to Friday 27, in Berlin. */
const WEEK = { timeMin: '2026-11-23', timeMax: '2026-11-27', timeZone: BERLIN };
const at = (day: number, time: string) => ({
  dateTime: `2026-11-${23 + day}T${time}:00+01:00`,
  timeZone: BERLIN,
});
const DAY_MS = 86_400_000;

/**
 * Answers an agent relays as they are: a query's AND/OR/NOT mean what they say, a rule that
 * matches nothing says so, a series is filed occurrence by occurrence, and a project's name where
 * its id belongs is answered with the id.
 */
describe('rules answers over MCP: query operators, empty matches, series filing, project names', () => {
  let gw: TestGateway;
  let work: string;
  let agent: Client;
  const ids: Record<string, string> = {};
  const projects: Record<string, string> = {};

  async function call(name: string, args: Out): Promise<Out> {
    const result = await agent.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return result.structuredContent as Out;
  }

  async function answer(name: string, args: Out): Promise<{ out: Out; text: string }> {
    const result = await agent.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return { out: result.structuredContent as Out, text: textOf(result) };
  }

  async function failure(name: string, args: Out): Promise<string> {
    const result = await agent.callTool({ name, arguments: args });
    expect(result.isError, `${name} should fail: ${textOf(result)}`).toBe(true);
    return textOf(result);
  }

  /** What is filed manually among the week's standups, seen from a preview's conflicts. */
  async function standupFilings(): Promise<{ eventId: string; currentProject: string }[]> {
    const preview = await call('preview_rule', {
      query: 'title:standup',
      projectId: projects.Globex,
      ...WEEK,
    });
    return (preview.conflicts as { eventId: string; currentProject: string; currentSource: string }[])
      .filter((conflict) => conflict.currentSource === 'manual')
      .map(({ eventId, currentProject }) => ({ eventId, currentProject }));
  }

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    const tenant = await gw.seedTenant('Answers');
    work = await gw.localCalendar(tenant.tenantId, 'Work', BERLIN);
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, { toolsets: ['calendar', 'rules'] });
    await gw.grant(tenant.tenantId, tenant.keyId, work, { read: true, write: true });
    agent = await connectClient(gw.mcpUrl, tenant.secret);

    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    const calendar = { id: work, externalId: work, timeZone: BERLIN };
    const add = async (key: string, event: Parameters<typeof provider.insertEvent>[1]) => {
      ids[key] = (await provider.insertEvent(calendar, event)).id;
    };
    await add('sync', {
      summary: 'Acme weekly sync',
      start: at(0, '09:00'),
      end: at(0, '10:00'),
      attendees: [{ email: 'bob@acme.com' }],
    });
    await add('planning', {
      summary: 'Acme planning',
      start: at(0, '11:00'),
      end: at(0, '12:00'),
      attendees: [{ email: 'ann@acme.com' }],
    });
    await add('lunch', { summary: 'Lunch', start: at(1, '12:00'), end: at(1, '13:00') });
    await add('dentist', { summary: 'Dentist', start: at(3, '10:00'), end: at(3, '11:00') });
    await add('standup', {
      summary: 'Daily standup',
      start: at(0, '08:00'),
      end: at(0, '08:15'),
      recurrence: ['RRULE:FREQ=DAILY;COUNT=5'],
    });
    // Two days ago, so inside the window create_rule and update_rule check, whenever this runs.
    const kickoff = Date.now() - 2 * DAY_MS;
    await add('kickoff', {
      summary: 'Initech kickoff',
      start: { dateTime: new Date(kickoff).toISOString() },
      end: { dateTime: new Date(kickoff + 3_600_000).toISOString() },
    });

    for (const name of ['Acme', 'Globex', 'Internal']) {
      const { project } = (await call('create_project', { name })) as { project: { id: string } };
      projects[name] = project.id;
    }
  });

  afterAll(async () => {
    await agent?.close().catch(() => {});
    await gw?.stop();
  });

  it('reads AND and OR in any case as operators, and refuses NOT pointing to -', async () => {
    for (const and of ['AND', 'and', 'And']) {
      const preview = await call('preview_rule', { query: `title:sync ${and} domain:acme.com`, ...WEEK });
      expect(preview, and).toMatchObject({ matchCount: 1, matches: [{ eventId: ids.sync }] });
      expect(preview.warnings, and).toBeUndefined();
    }
    for (const or of ['OR', 'or', 'Or']) {
      const preview = await call('preview_rule', { query: `title:lunch ${or} title:dentist`, ...WEEK });
      expect(preview.matchCount, or).toBe(2);
    }
    const negated = await call('preview_rule', { query: 'domain:acme.com AND -title:planning', ...WEEK });
    expect(negated).toMatchObject({ matchCount: 1, matches: [{ eventId: ids.sync }] });

    for (const not of ['NOT', 'not', 'Not']) {
      const query = `title:sync ${not} title:planning`;
      for (const [tool, args] of [
        ['preview_rule', { query, ...WEEK }],
        ['create_rule', { query, projectId: projects.Acme }],
      ] as const) {
        const message = await failure(tool, args);
        expect(message, `${tool} ${not}`).toContain(`'${not}' at position 11`);
        expect(message).toContain("use '-' to negate");
      }
    }
    const rule = (
      await call('create_rule', { query: 'title:sync AND domain:acme.com', projectId: projects.Acme })
    ).rule as { id: string; query: string };
    expect(rule.query).toBe('title:sync AND domain:acme.com');
    const refused = await failure('update_rule', {
      ruleId: rule.id,
      query: 'domain:acme.com not title:sync',
    });
    expect(refused).toContain("'not' at position 16 is not an operator: use '-' to negate");
    expect(await failure('preview_rule', { query: 'title:sync AND', ...WEEK })).toContain(
      "'AND' at position 11 has no condition after it",
    );
    await call('delete_rule', { ruleId: rule.id });
  });

  it('warns in preview_rule, create_rule and update_rule answers when the query matches nothing', async () => {
    const empty = await answer('preview_rule', { query: 'title:retro', ...WEEK });
    expect(empty.out.matchCount).toBe(0);
    const [warning] = empty.out.warnings as Warning[];
    expect(warning?.kind).toBe('no_matches');
    expect(warning?.message).toContain(
      'matches no event from 2026-11-23T00:00:00+01:00 to 2026-11-28T00:00:00+01:00',
    );
    expect(empty.text).toContain(warning?.message);

    const created = await answer('create_rule', { query: 'title:retro', projectId: projects.Internal });
    const createdWarnings = created.out.warnings as Warning[];
    expect(createdWarnings.map((w) => w.kind)).toEqual(['no_matches']);
    expect(createdWarnings[0]?.message).toContain('matches no event');
    expect(created.text).toContain(createdWarnings[0]?.message);
    expect(created.out.preview).toMatchObject({ matchCount: 0 });
    const saved = created.out.rule as { id: string; query: string };
    expect(saved.query).toBe('title:retro');

    const fixed = await answer('update_rule', { ruleId: saved.id, query: 'title:kickoff' });
    expect(fixed.out.warnings).toBeUndefined();
    expect(fixed.out.preview).toMatchObject({ matchCount: 1 });
    const broken = await answer('update_rule', { ruleId: saved.id, query: 'title:kickof' });
    expect((broken.out.warnings as Warning[])[0]?.kind).toBe('no_matches');
    expect(broken.text).toContain('matches no event');

    const good = await answer('create_rule', { query: 'initech', projectId: projects.Acme });
    expect(good.out.warnings).toBeUndefined();
    expect(good.out.preview).toMatchObject({ matchCount: 1 });
    for (const id of [saved.id, (good.out.rule as { id: string }).id]) {
      await call('delete_rule', { ruleId: id });
    }
  });

  it('says so in the syntax resource, the tool descriptions and the output schemas', async () => {
    const doc = await agent.readResource({ uri: 'calgate://docs/rules-syntax' });
    const text = (doc.contents[0] as { text: string }).text;
    expect(text).toContain('writing AND (any case) is optional');
    expect(text).toContain("use '-' to negate");
    expect(text).toContain('no_matches');
    const { tools } = await agent.listTools();
    for (const name of ['preview_rule', 'create_rule', 'update_rule']) {
      const tool = tools.find((candidate) => candidate.name === name);
      expect(tool?.description, name).toContain(
        "AND is implicit (may be written), OR in any case, '-' negates (not NOT).",
      );
      expect(tool?.description, name).toContain('warnings');
      expect(Object.keys(tool?.outputSchema?.properties ?? {}), name).toContain('warnings');
    }
  });

  it('files every occurrence of a series within timeMin/timeMax, and refuses a series without them', async () => {
    const withoutWindow = await failure('classify_event', {
      calendarId: work,
      eventId: ids.standup,
      projectId: projects.Internal,
    });
    expect(withoutWindow).toContain('recurring series');
    expect(withoutWindow).toContain('timeMin and timeMax');
    expect(await standupFilings()).toEqual([]);

    const empty = await failure('classify_event', {
      calendarId: work,
      eventId: ids.standup,
      projectId: projects.Internal,
      timeMin: '2026-12-01',
      timeMax: '2026-12-31',
      timeZone: BERLIN,
    });
    expect(empty).toContain('no occurrence');
    expect(empty).toContain('nothing was filed');
    expect(await standupFilings()).toEqual([]);

    const { out, text } = await answer('classify_event', {
      calendarId: work,
      eventId: ids.standup,
      projectId: projects.Internal,
      ...WEEK,
    });
    expect(out).toMatchObject({
      calendarId: work,
      eventId: ids.standup,
      projectId: projects.Internal,
      skip: false,
      source: 'manual',
      filed: 5,
      timeMin: '2026-11-23T00:00:00+01:00',
      timeMax: '2026-11-28T00:00:00+01:00',
    });
    expect(text).toContain('"filed":5');
    const filings = await standupFilings();
    expect(filings).toHaveLength(5);
    expect(filings.every((filing) => filing.currentProject === projects.Internal)).toBe(true);
    expect(new Set(filings.map((filing) => filing.eventId)).size).toBe(5);
    expect(filings.map((filing) => filing.eventId)).not.toContain(ids.standup);

    // Skipping part of the series: only the occurrences in the window change.
    const skipped = await call('classify_event', {
      calendarId: work,
      eventId: ids.standup,
      skip: true,
      timeMin: '2026-11-26',
      timeMax: '2026-11-27',
      timeZone: BERLIN,
    });
    expect(skipped).toMatchObject({ skip: true, projectId: null, filed: 2 });
    const after = await standupFilings();
    expect(after.filter((filing) => filing.currentProject === 'skip')).toHaveLength(2);
    expect(after.filter((filing) => filing.currentProject === projects.Internal)).toHaveLength(3);

    // One occurrence by its own id, and a single event, still file just that one.
    const [first] = filings;
    const one = await call('classify_event', {
      calendarId: work,
      eventId: first?.eventId,
      projectId: projects.Acme,
    });
    expect(one).toMatchObject({ eventId: first?.eventId, projectId: projects.Acme, filed: 1 });
    const single = await call('classify_event', { calendarId: work, eventId: ids.lunch, skip: true });
    expect(single).toMatchObject({ eventId: ids.lunch, skip: true, filed: 1 });
    expect((await standupFilings()).filter((filing) => filing.currentProject === projects.Acme)).toEqual([
      { eventId: first?.eventId, currentProject: projects.Acme },
    ]);
  });

  it("answers a project's name given as projectId with the project's id, wherever a projectId is taken", async () => {
    const hint = `Did you mean '${projects.Acme}' (Acme)?`;
    const rule = (await call('create_rule', { query: 'title:sync', projectId: projects.Globex })).rule as {
      id: string;
    };
    const refusals: [string, Out][] = [
      ['create_rule', { query: 'title:sync', projectId: 'Acme' }],
      ['create_rule', { query: 'title:sync', projectId: 'acme' }],
      ['create_rule', { query: 'title:sync', projectId: 'Acmee' }],
      [
        'create_classification_rule',
        { projectId: 'Acme', conditions: [{ property: 'title', value: 'sync' }] },
      ],
      ['update_rule', { ruleId: rule.id, projectId: 'Acme' }],
      ['preview_rule', { query: 'title:sync', projectId: 'Acme', ...WEEK }],
      ['list_rules', { projectId: 'Acme' }],
      ['classify_event', { calendarId: work, eventId: ids.sync, projectId: 'Acme' }],
    ];
    for (const [tool, args] of refusals) {
      const message = await failure(tool, args);
      expect(message, tool).toContain(hint);
      expect(message, tool).toContain('list_projects');
    }
    expect(await failure('create_rule', { query: 'title:sync', projectId: 'prj_missing' })).toMatch(
      /^No project prj_missing in this tenant; see list_projects\.$/,
    );
    const rules = (await call('list_rules', {})).rules as { id: string; projectId: string }[];
    expect(rules).toEqual([expect.objectContaining({ id: rule.id, projectId: projects.Globex })]);
  });
});
