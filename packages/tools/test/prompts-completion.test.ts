import type { CalendarProvider } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import { complete, completeCalendarId, completeTimeZone, MAX_COMPLETIONS } from '../src/completion.ts';
import { CalendarAccess, catalogue, isVisible, type KeyCalendar, type RulesServices } from '../src/index.ts';
import { getPrompt, listPrompts } from '../src/prompts.ts';
import { calendarResources, readCalendarResource } from '../src/resources/calendars.ts';
import { readToolsDoc, toolsDoc } from '../src/resources/tools-doc.ts';
import { keyCalendar } from './key-calendar.ts';

/** Monday 23 November 2026, 22:30 in Berlin: already Tuesday in Tokyo. */
const NOW = new Date('2026-11-23T21:30:00Z');

function calendar(id: string, summary: string, overrides: Partial<KeyCalendar> = {}): KeyCalendar {
  return keyCalendar({
    id,
    summary,
    timeZone: 'Europe/Berlin',
    primary: id === 'cal_work',
    accountEmail: 'me@example.com',
    canWrite: true,
    ...overrides,
  });
}

const CALENDARS = [
  calendar('cal_work', 'Work'),
  calendar('cal_family', 'Family', { canWrite: false }),
  calendar('cal_secret', 'Secret', { canRead: false }),
  calendar('cal_off', 'Old', { enabled: false }),
];

function setup(toolsets?: string[], calendars = CALENDARS) {
  const access = new CalendarAccess(
    { tenantId: 'tnt_1', keyId: 'key_1', calendars, toolsets, timeZone: 'Europe/Berlin' },
    () => ({}) as CalendarProvider,
  );
  const visibleEntries = catalogue().entries.filter((entry) => isVisible(entry, access));
  const visible = new Set(visibleEntries.map((entry) => entry.definition.name));
  return { access, visible, visibleEntries, context: { access, visible, now: () => NOW } };
}

const textOf = (result: ReturnType<typeof getPrompt>) =>
  result.messages.map((message) => (message.content.type === 'text' ? message.content.text : '')).join('');

describe('calendar resources', () => {
  it('lists only enabled calendars the key can read, with a template', () => {
    const { resources, resourceTemplates } = calendarResources(setup().access);
    expect(resources).toEqual([
      expect.objectContaining({
        uri: 'calgate://calendars/cal_work',
        name: 'Work',
        mimeType: 'application/json',
      }),
      expect.objectContaining({ uri: 'calgate://calendars/cal_family', name: 'Family' }),
    ]);
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual([
      'calgate://calendars/{calendarId}',
    ]);
  });

  it('offers none without the calendar toolset', () => {
    expect(calendarResources(setup(['scheduler']).access)).toEqual({ resources: [], resourceTemplates: [] });
  });

  it('refuses an unreadable calendar exactly like a missing one', async () => {
    const { access } = setup();
    const read = (uri: string) =>
      readCalendarResource(uri, { access, now: () => NOW, signal: new AbortController().signal });
    const missing = await read('calgate://calendars/cal_nothing').catch((error: unknown) => error);
    const secret = await read('calgate://calendars/cal_secret').catch((error: unknown) => error);
    // Worded as tools word a calendar they cannot find.
    expect(missing).toMatchObject({
      code: -32002,
      message:
        "Calendar 'cal_nothing' was not found. Call list_calendars for the calendars this key can use.",
    });
    expect(secret).toMatchObject({
      code: -32002,
      message: "Calendar 'cal_secret' was not found. Call list_calendars for the calendars this key can use.",
    });
    // A name works as in tools; a near miss suggests only calendars the key can read.
    await expect(read('calgate://calendars/Secret')).rejects.toMatchObject({
      code: -32002,
      message: "Calendar 'Secret' was not found. Call list_calendars for the calendars this key can use.",
    });
    await expect(read('calgate://calendars/Wrk')).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining("Did you mean 'Work' (cal_work)?"),
    });
    await expect(read('calgate://calendars/%E0%A4%A')).rejects.toMatchObject({ code: -32002 });
    expect(await read('calgate://docs/tools')).toBeUndefined();
  });
});

describe('tool reference resource', () => {
  it("describes the key's visible tools only", () => {
    const { visibleEntries } = setup(['calendar']);
    const docs = toolsDoc(visibleEntries);
    expect(docs.map((tool) => tool.name)).toContain('list_events');
    expect(docs.map((tool) => tool.name)).not.toContain('book_slot');
    expect(docs[0]).toEqual(
      expect.objectContaining({
        name: 'list_calendars',
        title: 'List calendars',
        inputSchema: expect.any(Object),
      }),
    );
    expect(readToolsDoc('calgate://docs/tools', [])).toBeUndefined();
  });
});

describe('prompts', () => {
  it('offers the prompts whose tools the key sees', () => {
    expect(listPrompts(setup().context).map((prompt) => prompt.name)).toEqual([
      'plan_my_day',
      'find_meeting_time',
      'weekly_review',
    ]);
    expect(listPrompts(setup(['scheduler']).context)).toEqual([]);
    expect(listPrompts(setup(undefined, []).context)).toEqual([]);
  });

  it('plan_my_day reads the day in the key zone by default', () => {
    const text = textOf(getPrompt('plan_my_day', {}, setup().context));
    expect(text).toContain('Monday 2026-11-23, in Europe/Berlin');
    expect(text).toContain(
      'list_events with {"timeMin":"2026-11-23T00:00:00+01:00","timeMax":"2026-11-24T00:00:00+01:00","maxResults":250}',
    );
    expect(text).toContain(
      'find_free_time with {"timeMin":"2026-11-23","timeMax":"2026-11-23","timeZone":"Europe/Berlin","minDurationMinutes":30}',
    );
    const tokyo = textOf(getPrompt('plan_my_day', { timeZone: 'Asia/Tokyo' }, setup().context));
    expect(tokyo).toContain('Tuesday 2026-11-24, in Asia/Tokyo');
  });

  it('find_meeting_time spells out the search and the booking', () => {
    const text = textOf(
      getPrompt(
        'find_meeting_time',
        {
          durationMinutes: '45',
          attendees: 'ann@example.com, bob@example.com',
          within: '2026-11-24/2026-11-26',
        },
        setup().context,
      ),
    );
    expect(text).toContain('Find a 45-minute meeting time with ann@example.com, bob@example.com');
    expect(text).toContain(
      'find_free_time with {"timeMin":"2026-11-24","timeMax":"2026-11-26","timeZone":"Europe/Berlin","minDurationMinutes":45}',
    );
    // create_event takes attendees as email addresses, on a calendar the key may write.
    expect(text).toContain(
      'create_event with {"calendarId":"cal_work","summary":"<title>","start":{"dateTime":"<slot start>"},"end":{"dateTime":"<slot end>"},"attendees":["ann@example.com","bob@example.com"]}',
    );
    const days = textOf(
      getPrompt('find_meeting_time', { durationMinutes: '30', within: '3' }, setup().context),
    );
    expect(days).toContain('"timeMin":"2026-11-23","timeMax":"2026-11-25"');
  });

  it('weekly_review starts on Monday and adds the time summary with the rules toolset', () => {
    const plain = textOf(getPrompt('weekly_review', {}, setup(['calendar']).context));
    expect(plain).toContain('Monday 2026-11-23 to Sunday 2026-11-29');
    expect(plain).not.toContain('get_time_summary');
    const rules = textOf(
      getPrompt(
        'weekly_review',
        { weekStart: '2026-11-16', project: 'Acme' },
        setup(['calendar', 'rules']).context,
      ),
    );
    expect(rules).toContain(
      'get_time_summary with {"timeMin":"2026-11-16","timeMax":"2026-11-22","timeZone":"Europe/Berlin","groupBy":"project"}',
    );
    expect(rules).toContain("look closely at 'Acme'");
  });

  it('refuses bad arguments and unknown prompts with -32602 and a clear message', () => {
    const { context } = setup();
    const failure = (name: string, args: Record<string, string>) => {
      try {
        getPrompt(name, args, context);
      } catch (error) {
        return error as { code: number; message: string };
      }
      throw new Error('expected a refusal');
    };
    expect(failure('find_meeting_time', {})).toEqual(
      expect.objectContaining({
        code: -32602,
        message: expect.stringContaining('durationMinutes is required'),
      }),
    );
    expect(failure('find_meeting_time', { durationMinutes: '2' }).message).toContain('between 5 and 1440');
    expect(
      failure('find_meeting_time', { durationMinutes: '30', within: '2026-11-27/2026-11-24' }).message,
    ).toContain('within must be a date');
    expect(
      failure('find_meeting_time', { durationMinutes: '30', attendees: 'not an email' }).message,
    ).toContain('attendees must be email addresses');
    expect(failure('plan_my_day', { date: '2026-02-30' }).message).toContain(
      'date must be a date as YYYY-MM-DD',
    );
    expect(failure('plan_my_day', { timeZone: 'Mars/Olympus' }).message).toContain('IANA time zone');
    // One sentence per problem; the arguments it takes only after an unknown one.
    expect(failure('plan_my_day', { colour: 'red' }).message).toBe(
      "Invalid arguments for prompt plan_my_day: Unknown argument 'colour'. It takes: date, timeZone, calendarId.",
    );
    expect(failure('find_meeting_time', { durationMinutes: '2', within: 'soon' }).message).toBe(
      'Invalid arguments for prompt find_meeting_time: durationMinutes must be between 5 and 1440 minutes. within must be a date (2026-11-24), a range of dates (2026-11-24/2026-11-27) or a number of days from today (1-60).',
    );
    expect(failure('nothing', {})).toEqual(
      expect.objectContaining({
        code: -32602,
        message:
          "Unknown prompt 'nothing'. Prompts available to this key: plan_my_day, find_meeting_time, weekly_review.",
      }),
    );
    // A prompt the key is not offered is unknown to it.
    expect(() => getPrompt('plan_my_day', {}, setup(['scheduler']).context)).toThrow(/Unknown prompt/);
  });
});

describe('completion', () => {
  it('completes time zones by prefix, also by city, at most 100', () => {
    expect(completeTimeZone('Europe/Ber')).toEqual(['Europe/Berlin']);
    expect(completeTimeZone('berl')).toContain('Europe/Berlin');
    expect(completeTimeZone('ut')).toContain('UTC');
    expect(completeTimeZone('').length).toBeGreaterThan(MAX_COMPLETIONS);
  });

  it('completes calendar ids by id or name prefix', () => {
    expect(completeCalendarId(CALENDARS, 'cal_w')).toEqual(['cal_work']);
    expect(completeCalendarId(CALENDARS, 'fam')).toEqual(['cal_family']);
  });

  it('answers the template and prompt arguments, readable calendars only', async () => {
    const { context } = setup();
    const template = await complete(
      {
        ref: { type: 'ref/resource', uri: 'calgate://calendars/{calendarId}' },
        argument: { name: 'calendarId', value: 'cal_' },
      },
      context,
    );
    expect(template.completion).toEqual({ values: ['cal_work', 'cal_family'], total: 2, hasMore: false });
    const zones = await complete(
      { ref: { type: 'ref/prompt', name: 'plan_my_day' }, argument: { name: 'timeZone', value: '' } },
      context,
    );
    expect(zones.completion.values).toHaveLength(MAX_COMPLETIONS);
    expect(zones.completion.hasMore).toBe(true);
    const unknown = await complete(
      { ref: { type: 'ref/prompt', name: 'nothing' }, argument: { name: 'timeZone', value: '' } },
      context,
    );
    expect(unknown.completion.values).toEqual([]);
  });

  it('completes project names only with the rules toolset and services', async () => {
    const rules = {
      listProjects: async () => [
        { id: 'prj_1', name: 'Acme', client: null, colour: '#000000', archived: false },
        { id: 'prj_2', name: 'Globex', client: null, colour: '#000000', archived: false },
      ],
    } as unknown as RulesServices;
    const ask = (toolsets: string[], services?: RulesServices) =>
      complete(
        { ref: { type: 'ref/prompt', name: 'weekly_review' }, argument: { name: 'project', value: 'a' } },
        { ...setup(toolsets).context, rules: services },
      );
    expect((await ask(['calendar', 'rules'], rules)).completion.values).toEqual(['Acme']);
    expect((await ask(['calendar'], rules)).completion.values).toEqual([]);
    expect((await ask(['calendar', 'rules'])).completion.values).toEqual([]);
  });
});
