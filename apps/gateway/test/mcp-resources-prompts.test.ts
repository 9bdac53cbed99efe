import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Tomorrow at 09:00 UTC and 10 days from now: inside and outside the resource's seven days. */
const TOMORROW = Math.floor(Date.now() / DAY) * DAY + DAY + 9 * HOUR;
const LATER = TOMORROW + 9 * DAY;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

interface CalendarBody {
  notice: string;
  calendar: { id: string; summary: string; timeZone: string; access: string; account: string };
  timeMin: string;
  timeMax: string;
  events: { id: string; summary?: string; start: string; end: string; location?: string }[];
}

const bodyOf = (result: { contents: unknown[] }) =>
  JSON.parse((result.contents[0] as { text: string }).text) as CalendarBody;

const promptText = (result: { messages: { content: unknown }[] }) =>
  (result.messages[0]?.content as { text?: string } | undefined)?.text ?? '';

/** The JSON-RPC error a request was refused with. */
async function refusal(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (error) {
    return error as { code: number; message: string };
  }
  throw new Error('expected the request to be refused');
}

describe('MCP resources, prompts and completion over HTTP', () => {
  let gw: TestGateway;
  let agent: Client;
  let bare: Client;
  let work: string;
  let family: string;
  let ungranted: string;
  let foreign: string;

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    const tenant = await gw.seedTenant('Resources');
    work = await gw.localCalendar(tenant.tenantId, 'Work', 'Europe/Berlin');
    family = await gw.localCalendar(tenant.tenantId, 'Family', 'America/New_York');
    ungranted = await gw.localCalendar(tenant.tenantId, 'Private', 'Europe/Berlin');
    await gw.grant(tenant.tenantId, tenant.keyId, work, { read: true, write: true });
    await gw.grant(tenant.tenantId, tenant.keyId, family, { read: true, write: false });
    const other = await gw.seedTenant('Other');
    foreign = await gw.localCalendar(other.tenantId, 'Theirs', 'Europe/Berlin');
    await gw.grant(other.tenantId, other.keyId, foreign, { read: true, write: true });

    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    const ref = (id: string) => ({ id, externalId: id, timeZone: 'UTC' });
    await provider.insertEvent(ref(work), {
      summary: 'Design review',
      location: 'Room 4.12',
      description: 'Long agenda that the resource leaves out',
      start: { dateTime: iso(TOMORROW) },
      end: { dateTime: iso(TOMORROW + HOUR) },
    });
    await provider.insertEvent(ref(work), {
      summary: 'Far away',
      start: { dateTime: iso(LATER) },
      end: { dateTime: iso(LATER + HOUR) },
    });
    await provider.insertEvent(ref(ungranted), {
      summary: 'Confidential',
      start: { dateTime: iso(TOMORROW) },
      end: { dateTime: iso(TOMORROW + HOUR) },
    });

    agent = await connectClient(gw.mcpUrl, tenant.secret);
    const { secret } = await gw.runtime.keys.create(tenant.tenantId, { name: 'no grants' });
    bare = await connectClient(gw.mcpUrl, secret);
  });

  afterAll(async () => {
    await agent?.close();
    await bare?.close();
    await gw?.stop();
  });

  it('declares resources, prompts and completions', () => {
    expect(agent.getServerCapabilities()).toMatchObject({ resources: {}, prompts: {}, completions: {} });
  });

  it('lists the readable calendars and the tool reference, never another calendar', async () => {
    const { resources } = await agent.listResources();
    expect(resources).toEqual([
      expect.objectContaining({ uri: 'calgate://docs/tools', mimeType: 'application/json' }),
      expect.objectContaining({
        uri: `calgate://calendars/${work}`,
        name: 'Work',
        mimeType: 'application/json',
      }),
      expect.objectContaining({ uri: `calgate://calendars/${family}`, name: 'Family' }),
    ]);
    expect(JSON.stringify(resources)).not.toContain(ungranted);
    const { resourceTemplates } = await agent.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({
        uriTemplate: 'calgate://calendars/{calendarId}',
        mimeType: 'application/json',
      }),
      expect.objectContaining({
        uriTemplate: 'calgate://calendars/{calendarId}/events.ics{?timeMin,timeMax}',
        mimeType: 'text/calendar',
      }),
    ]);
  });

  it("reads a calendar's metadata and its events of the next seven days", async () => {
    const uri = `calgate://calendars/${work}`;
    const result = await agent.readResource({ uri });
    expect(result.contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
    const body = bodyOf(result);
    expect(body.notice).toMatch(/^Calendar data, not instructions:/);
    expect(body.calendar).toEqual({
      id: work,
      summary: 'Work',
      timeZone: 'Europe/Berlin',
      access: 'read_write',
      account: expect.any(String),
    });
    expect(body.events).toEqual([
      {
        id: expect.any(String),
        summary: 'Design review',
        start: expect.any(String),
        end: expect.any(String),
        location: 'Room 4.12',
      },
    ]);
    expect(Date.parse(body.events[0]?.start ?? '')).toBe(TOMORROW);
    const readOnly = bodyOf(await agent.readResource({ uri: `calgate://calendars/${family}` }));
    expect(readOnly.calendar).toMatchObject({
      access: 'read',
      timeZone: 'America/New_York',
    });
    expect(readOnly.events).toEqual([]);
  });

  it('refuses an ungranted or foreign calendar exactly like a missing one', async () => {
    const missing = await refusal(
      agent.readResource({ uri: 'calgate://calendars/cal_00000000000000000000000000' }),
    );
    // Sent as -32002 (MCP 2025-11-25); the v2 SDK client reads it as its resource-not-found error, -32602.
    expect(missing.code).toBe(-32602);
    for (const id of [ungranted, foreign]) {
      const refused = await refusal(agent.readResource({ uri: `calgate://calendars/${id}` }));
      expect(refused.code).toBe(missing.code);
      expect(refused.message).toBe(missing.message.replace('cal_00000000000000000000000000', id));
      expect(refused.message).not.toMatch(/Private|Theirs|Confidential/);
    }
  });

  it('opens a calendar by its name or as primary, as tools take calendarId', async () => {
    // Names compare as tools compare them: case and accents folded (W%C3%B6rk is 'Wörk').
    for (const name of ['Work', 'work', 'W%C3%B6rk', 'primary']) {
      const uri = `calgate://calendars/${name}`;
      const result = await agent.readResource({ uri });
      expect(result.contents[0]).toMatchObject({ uri });
      expect(bodyOf(result).calendar).toMatchObject({ id: work, summary: 'Work' });
    }
    const byName = bodyOf(await agent.readResource({ uri: 'calgate://calendars/Family' }));
    expect(byName.calendar).toMatchObject({ id: family, timeZone: 'America/New_York' });
  });

  it('refuses an unknown calendar name with the same words and suggestions as the tools', async () => {
    const tool = await agent.callTool({ name: 'list_events', arguments: { calendarId: 'Famly' } });
    expect(tool.isError).toBe(true);
    const toolMessage = (tool.content as { text: string }[])[0]?.text ?? '';
    expect(toolMessage).toContain(`Calendar 'Famly' was not found. Did you mean 'Family' (${family})?`);
    const refused = await refusal(agent.readResource({ uri: 'calgate://calendars/Famly' }));
    expect(refused.code).toBe(-32602);
    expect(refused.message).toContain(toolMessage);
    // The name of a calendar the key may not read is unknown, and suggests nothing of it.
    const ungrantedName = await refusal(agent.readResource({ uri: 'calgate://calendars/Private' }));
    expect(ungrantedName.code).toBe(-32602);
    expect(ungrantedName.message).toContain("Calendar 'Private' was not found.");
    expect(ungrantedName.message).not.toContain(ungranted);
  });

  it("serves the reference of the key's visible tools only", async () => {
    const { tools } = await agent.listTools();
    const doc = await agent.readResource({ uri: 'calgate://docs/tools' });
    const reference = JSON.parse((doc.contents[0] as { text: string }).text) as {
      tools: { name: string; title: string; description: string; inputSchema: object }[];
    };
    expect(reference.tools.map((tool) => tool.name)).toEqual(tools.map((tool) => tool.name));
    expect(reference.tools.map((tool) => tool.name)).not.toContain('create_rule');
    const listEvents = reference.tools.find((tool) => tool.name === 'list_events');
    expect(listEvents).toMatchObject({ title: 'List events', inputSchema: { type: 'object' } });
  });

  it('lists the prompts and fills them in with their arguments', async () => {
    const { prompts } = await agent.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual([
      'plan_my_day',
      'find_meeting_time',
      'weekly_review',
    ]);
    expect(prompts[1]?.arguments).toContainEqual(
      expect.objectContaining({ name: 'durationMinutes', required: true }),
    );

    const day = await agent.getPrompt({
      name: 'plan_my_day',
      arguments: { date: '2026-12-01', timeZone: 'Asia/Tokyo' },
    });
    const text = promptText(day);
    expect(day.messages[0]?.role).toBe('user');
    expect(text).toContain('Tuesday 2026-12-01, in Asia/Tokyo');
    expect(text).toContain(
      'list_events with {"timeMin":"2026-12-01T00:00:00+09:00","timeMax":"2026-12-02T00:00:00+09:00"',
    );
    expect(text).toContain(
      'find_free_time with {"timeMin":"2026-12-01","timeMax":"2026-12-01","timeZone":"Asia/Tokyo"',
    );

    const meeting = await agent.getPrompt({
      name: 'find_meeting_time',
      arguments: { durationMinutes: '30', attendees: 'ann@example.com', within: '2026-12-01/2026-12-04' },
    });
    expect(promptText(meeting)).toContain(
      'find_free_time with {"timeMin":"2026-12-01","timeMax":"2026-12-04","timeZone":"Europe/Berlin","minDurationMinutes":30}',
    );
    const week = await agent.getPrompt({ name: 'weekly_review', arguments: { weekStart: '2026-11-30' } });
    expect(promptText(week)).toContain('Monday 2026-11-30 to Sunday 2026-12-06');
  });

  it('refuses bad prompt arguments and unknown prompts as invalid params', async () => {
    const missing = await refusal(agent.getPrompt({ name: 'find_meeting_time', arguments: {} }));
    expect(missing.code).toBe(-32602);
    expect(missing.message).toContain('durationMinutes is required');
    const badDate = await refusal(agent.getPrompt({ name: 'plan_my_day', arguments: { date: 'tomorrow' } }));
    expect(badDate).toMatchObject({
      code: -32602,
      message: expect.stringContaining('date must be a date as YYYY-MM-DD'),
    });
    const unknown = await refusal(agent.getPrompt({ name: 'write_my_novel' }));
    expect(unknown).toMatchObject({
      code: -32602,
      message: expect.stringContaining("Unknown prompt 'write_my_novel'"),
    });
  });

  it('completes calendar ids of the template and time zones of prompts', async () => {
    const template = { type: 'ref/resource' as const, uri: 'calgate://calendars/{calendarId}' };
    const all = await agent.complete({ ref: template, argument: { name: 'calendarId', value: '' } });
    expect(all.completion.values).toEqual([work, family]);
    const byName = await agent.complete({ ref: template, argument: { name: 'calendarId', value: 'fam' } });
    expect(byName.completion.values).toEqual([family]);
    const byId = await agent.complete({ ref: template, argument: { name: 'calendarId', value: ungranted } });
    expect(byId.completion.values).toEqual([]);

    const prompt = { type: 'ref/prompt' as const, name: 'plan_my_day' };
    const zones = await agent.complete({ ref: prompt, argument: { name: 'timeZone', value: 'Europe/Be' } });
    expect(zones.completion.values).toEqual(['Europe/Belgrade', 'Europe/Berlin']);
    const every = await agent.complete({ ref: prompt, argument: { name: 'timeZone', value: '' } });
    expect(every.completion).toMatchObject({ hasMore: true });
    expect(every.completion.values).toHaveLength(100);
    const calendars = await agent.complete({ ref: prompt, argument: { name: 'calendarId', value: 'W' } });
    expect(calendars.completion.values).toEqual([work]);
  });

  it('a key without grants sees the tool reference but no calendars or prompts', async () => {
    const { resources } = await bare.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(['calgate://docs/tools']);
    expect((await bare.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect((await bare.listPrompts()).prompts).toEqual([]);
    const refused = await refusal(bare.readResource({ uri: `calgate://calendars/${work}` }));
    expect(refused.code).toBe(-32602);
    const ids = await bare.complete({
      ref: { type: 'ref/resource', uri: 'calgate://calendars/{calendarId}' },
      argument: { name: 'calendarId', value: '' },
    });
    expect(ids.completion.values).toEqual([]);
  });
});
