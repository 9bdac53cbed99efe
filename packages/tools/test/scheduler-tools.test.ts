import type { CalendarProvider } from '@calgate/providers';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CalendarAccess,
  type CatalogueEntry,
  catalogue,
  createMcpServer,
  type DeliveryTargetInfo,
  type KeyCalendar,
} from '../src/index.ts';
import { keyCalendar } from './key-calendar.ts';
import { MemoryScheduler } from './scheduler-memory.ts';

const NOW = new Date('2026-11-23T12:00:00Z');
const WEBHOOK: DeliveryTargetInfo = {
  targetId: 'tgt_01JQ9A2H7PXN3MB5VW8KQRTCZD',
  kind: 'webhook',
  name: 'Ops webhook',
  origin: 'https://hooks.example.com',
  defaultAgentId: null,
  disabled: false,
  disabledReason: null,
};
const LETTA: DeliveryTargetInfo = {
  targetId: 'tgt_01JQ9A4C8W2KTN5XRB7MVQ3HYP',
  kind: 'letta',
  name: 'Letta',
  origin: 'https://letta.example.com',
  defaultAgentId: null,
  disabled: false,
  disabledReason: null,
};
const SCHEDULER_TOOLS = catalogue().entries.filter((entry) => entry.definition.toolset === 'scheduler');

function calendar(id: string, summary: string, overrides: Partial<KeyCalendar> = {}): KeyCalendar {
  return keyCalendar({ id, summary, timeZone: 'Europe/Berlin', primary: id === 'cal_work', ...overrides });
}

const READABLE = [
  calendar('cal_work', 'Work'),
  calendar('cal_secret', 'Secret', { canRead: false, canWrite: true }),
  calendar('cal_old', 'Old account', { connectionStatus: 'needs_reauth' }),
];

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** An MCP client of a key with the scheduler toolset, over the server the gateway builds per request. */
async function connect(
  options: { scheduler?: MemoryScheduler | undefined; calendars?: KeyCalendar[]; toolsets?: string[] } = {},
) {
  const access = new CalendarAccess(
    {
      tenantId: 'tnt_1',
      keyId: 'key_1',
      calendars: options.calendars ?? READABLE,
      toolsets: options.toolsets ?? ['scheduler'],
    },
    () => ({ kind: 'local' }) as unknown as CalendarProvider,
  );
  const server = createMcpServer({
    catalogue: catalogue(),
    access,
    requestId: 'req_1',
    version: 't',
    now: () => NOW,
    ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'scheduler-tools', version: '1' });
  await client.connect(clientSide);
  clients.push(client);
  const call = async (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => {
    const result = await client.callTool({
      name,
      arguments: args,
      ...(meta === undefined ? {} : { _meta: meta }),
    });
    const text = (result.content as { text: string }[])[0]?.text ?? '';
    return {
      isError: result.isError === true,
      text,
      out: result.structuredContent as Record<string, unknown>,
    };
  };
  return { client, call, access };
}

/** Whether `actual` holds everything `expected` says (arrays: each expected item somewhere). */
function contains(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && expected.every((item) => actual.some((value) => contains(value, item)));
  }
  if (expected !== null && typeof expected === 'object') {
    return (
      actual !== null &&
      typeof actual === 'object' &&
      Object.entries(expected).every(([key, value]) =>
        contains((actual as Record<string, unknown>)[key], value),
      )
    );
  }
  return actual === expected;
}

/** Every key anywhere in a JSON Schema. */
function keywordsOf(schema: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) {
    for (const item of schema) {
      keywordsOf(item, found);
    }
  } else if (schema !== null && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      found.add(key);
      // Property names are not keywords.
      if (key === 'properties') {
        for (const child of Object.values(value as object)) {
          keywordsOf(child, found);
        }
      } else {
        keywordsOf(value, found);
      }
    }
  }
  return found;
}

describe('scheduler toolset: listing and schemas', () => {
  it('is offered as eleven tools; only schedule_prompt_around_events needs a calendar grant', async () => {
    const { client } = await connect({ scheduler: new MemoryScheduler(NOW) });
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual([
      'schedule_prompt_at',
      'schedule_prompt_cron',
      'schedule_prompt_every',
      'schedule_prompt_rrule',
      'schedule_prompt_around_events',
      'list_scheduled_prompts',
      'cancel_scheduled_prompt',
      'list_delivery_targets',
      'list_letta_agents',
      'test_delivery_target',
      'scheduler_status',
    ]);
    const noGrants = await connect({ scheduler: new MemoryScheduler(NOW), calendars: [] });
    const offered = (await noGrants.client.listTools()).tools.map((tool) => tool.name);
    expect(offered).toEqual(names.filter((name) => name !== 'schedule_prompt_around_events'));
    const hidden = await noGrants.call('schedule_prompt_around_events', {
      prompt: 'x',
      query: 'title:standup',
      offsetMinutes: -5,
    });
    expect(hidden.isError).toBe(true);
    expect(hidden.text).toMatch(/needs Read on at least one calendar/);
  });

  it('a key without the toolset is not offered the tools and is told how to switch it on', async () => {
    const { client, call } = await connect({ scheduler: new MemoryScheduler(NOW), toolsets: ['calendar'] });
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names.some((name) => SCHEDULER_TOOLS.some((entry) => entry.definition.name === name))).toBe(false);
    const answer = await call('scheduler_status', {});
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/'scheduler' toolset.*--toolsets calendar,scheduler/);
  });

  it.each(SCHEDULER_TOOLS.map((entry) => [entry.definition.name, entry] as [string, CatalogueEntry]))(
    '%s: a strict input schema (no oneOf/anyOf/allOf, no null types, closed objects)',
    (_name, entry) => {
      const keywords = keywordsOf(entry.inputSchema);
      for (const banned of ['oneOf', 'anyOf', 'allOf', 'not', 'nullable', '$ref', 'if']) {
        expect(keywords.has(banned), banned).toBe(false);
      }
      expect(JSON.stringify(entry.inputSchema)).not.toContain('"null"');
      expect(entry.inputSchema.additionalProperties).toBe(false);
      expect(entry.definition.title).not.toBe('');
      expect(entry.definition.input.safeParse(entry.definition.example).success).toBe(true);
    },
  );

  it('shows the rules syntax resource to a key with the scheduler toolset, but not the timesheet', async () => {
    const { client } = await connect({ scheduler: new MemoryScheduler(NOW) });
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual([
      'calgate://docs/tools',
      'calgate://docs/rules-syntax',
    ]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    const doc = await client.readResource({ uri: 'calgate://docs/rules-syntax' });
    expect(JSON.stringify(doc.contents)).toMatch(/title:/);
    await expect(
      client.readResource({ uri: 'calgate://timesheet.csv?timeMin=2026-11-23&timeMax=2026-11-27' }),
    ).rejects.toThrow(/Unknown resource/);
  });
});

describe('scheduler tools against an in-memory scheduler', () => {
  it('every documented example runs and returns what /api/docs says', async () => {
    const scheduler = new MemoryScheduler(NOW, [WEBHOOK, LETTA]);
    const { call } = await connect({ scheduler });
    let firstId: string | undefined;
    for (const { definition } of SCHEDULER_TOOLS) {
      const args: Record<string, unknown> = { ...(definition.example as Record<string, unknown>) };
      if (definition.name === 'cancel_scheduled_prompt') {
        args.scheduleId = firstId;
      }
      const answer = await call(definition.name, args);
      expect(answer.isError, `${definition.name}: ${answer.text}`).toBe(false);
      expect(definition.exampleResult, definition.name).toBeDefined();
      expect(contains(answer.out, definition.exampleResult), `${definition.name}: ${answer.text}`).toBe(true);
      firstId ??= answer.out.scheduleId as string | undefined;
    }
  });

  it("answers nextRun and upcoming in RFC 3339, in the schedule zone (cron, rrule) else the key's", async () => {
    const { call } = await connect({ scheduler: new MemoryScheduler(NOW, [WEBHOOK]) });
    const cron = await call('schedule_prompt_cron', {
      prompt: 'Plan the day.',
      cron: '0 9 * * MON-FRI',
      timeZone: 'Europe/Berlin',
      maxRepetitions: 10,
      endAt: '2027-06-30T00:00:00+02:00',
    });
    expect(cron.isError, cron.text).toBe(false);
    expect(cron.out).toMatchObject({
      kind: 'cron',
      description: 'cron 0 9 * * MON-FRI in Europe/Berlin',
      status: 'active',
      timeZone: 'Europe/Berlin',
      targetId: WEBHOOK.targetId,
      nextRun: '2026-11-24T09:00:00+01:00',
      maxRepetitions: 10,
      endAt: '2027-06-30T00:00:00+02:00',
    });
    expect(cron.out.upcoming).toEqual([
      '2026-11-24T09:00:00+01:00',
      '2026-11-25T09:00:00+01:00',
      '2026-11-26T09:00:00+01:00',
      '2026-11-27T09:00:00+01:00',
      '2026-11-30T09:00:00+01:00',
    ]);
    const every = await call('schedule_prompt_every', {
      prompt: 'Check the queue.',
      every: '1h30m',
      startAt: '2026-11-23T14:00:00+01:00',
    });
    // No zone of its own: written in the key's (its default calendar's, Europe/Berlin), and says so.
    expect(every.out).toMatchObject({
      kind: 'interval',
      timeZone: 'Europe/Berlin',
      nextRun: '2026-11-23T14:00:00+01:00',
    });
    expect((every.out.upcoming as string[]).slice(0, 2)).toEqual([
      '2026-11-23T14:00:00+01:00',
      '2026-11-23T15:30:00+01:00',
    ]);
  });

  it('passes the request _meta to the service, which finds the agent there; an explicit agentId wins', async () => {
    const scheduler = new MemoryScheduler(NOW, [WEBHOOK]);
    const { call } = await connect({ scheduler });
    const meta = { agentId: 'agent-from-meta', 'letta/run': 'run-1' };
    const fromMeta = await call('schedule_prompt_at', { prompt: 'Ping.', at: '2026-11-24T08:00:00Z' }, meta);
    expect(fromMeta.out.agentId).toBe('agent-from-meta');
    const explicit = await call(
      'schedule_prompt_at',
      { prompt: 'Ping.', at: '2026-11-24T08:00:00Z', agentId: 'agent-explicit' },
      meta,
    );
    expect(explicit.out.agentId).toBe('agent-explicit');
    const inputs = scheduler.calls.filter((c) => c.method === 'schedule').map((c) => c.args[0]);
    expect(inputs[0]).toEqual({
      prompt: 'Ping.',
      schedule: { kind: 'once', at: '2026-11-24T08:00:00Z' },
      targetId: undefined,
      agentId: undefined,
      meta,
      maxRepetitions: undefined,
      endAt: undefined,
    });
    expect(inputs[1]).toMatchObject({ agentId: 'agent-explicit', meta });
    // Without _meta the service gets none.
    await call('schedule_prompt_at', { prompt: 'Ping.', at: '2026-11-24T08:00:00Z' });
    expect(scheduler.calls.at(-1)?.args[0]).toMatchObject({ meta: undefined });
  });

  it('refuses bad arguments with messages that say what is right', async () => {
    const scheduler = new MemoryScheduler(NOW, [WEBHOOK]);
    const { call } = await connect({ scheduler });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        'schedule_prompt_at',
        { prompt: 'x', at: 'tomorrow 9am' },
        /'at': 'tomorrow 9am' is not a date-time: use RFC 3339 with an offset .* or a local date-time/,
      ],
      ['schedule_prompt_at', { prompt: 'x', time: '2026-12-01T09:00:00Z' }, /Unknown property 'time'/],
      ['schedule_prompt_at', { at: '2026-12-01T09:00:00Z' }, /'prompt' is required/],
      [
        'schedule_prompt_cron',
        { prompt: 'x', cron: '0 9 * * *', timeZone: 'Mars/Olympus' },
        /IANA time zone/,
      ],
      [
        'schedule_prompt_cron',
        { prompt: 'x', cron: '0 9 * * *', maxRepetitions: 0 },
        /'maxRepetitions'.*at least 1/,
      ],
      ['schedule_prompt_every', { prompt: 'x', every: 45 }, /'every' must be a string, not a number/],
      [
        'schedule_prompt_rrule',
        { prompt: 'x', rrule: 'FREQ=DAILY', dtstart: '2026-12-01T09:00:00+01:00' },
        /'dtstart': must be a local date-time YYYY-MM-DDTHH:MM:SS without offset/,
      ],
      [
        'schedule_prompt_around_events',
        { prompt: 'x', query: 'title:standup', offsetMinutes: 2.5 },
        /'offsetMinutes' must be an int/,
      ],
      [
        'schedule_prompt_around_events',
        { prompt: 'x', query: 'title:standup', offsetMinutes: -20_000 },
        /'offsetMinutes' is too small: at least -10080/,
      ],
      ['list_scheduled_prompts', { includeCancelled: 'yes' }, /'includeCancelled' must be a boolean/],
      ['cancel_scheduled_prompt', {}, /'scheduleId' is required/],
      ['list_letta_agents', {}, /'targetId' is required/],
    ];
    for (const [name, args, message] of cases) {
      const answer = await call(name, args);
      expect(answer.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(answer.text).toMatch(message);
    }
    // None of these reached the service.
    expect(scheduler.calls).toEqual([]);
  });

  it("lets the service's errors through as tool errors: bad cron, past time, no target to choose", async () => {
    const { call } = await connect({ scheduler: new MemoryScheduler(NOW, [WEBHOOK, LETTA]) });
    const cron = await call('schedule_prompt_cron', {
      prompt: 'x',
      cron: '0 9 * * FUNDAY',
      targetId: WEBHOOK.targetId,
    });
    expect(cron.isError).toBe(true);
    expect(cron.text).toMatch(/FUNDAY/);
    const past = await call('schedule_prompt_at', {
      prompt: 'x',
      at: '2026-11-01T09:00:00Z',
      targetId: WEBHOOK.targetId,
    });
    expect(past.text).toMatch(/at '2026-11-01T09:00:00Z' is in the past/);
    const which = await call('schedule_prompt_every', { prompt: 'x', every: '1h' });
    expect(which.isError).toBe(true);
    expect(which.text).toMatch(/Give targetId: this tenant has 2 delivery targets/);
  });

  it('schedule_prompt_around_events checks the query and resolves calendars like every read does', async () => {
    const scheduler = new MemoryScheduler(NOW, [WEBHOOK]);
    const { call } = await connect({ scheduler });
    const bad = await call('schedule_prompt_around_events', {
      prompt: 'x',
      query: 'title:(',
      offsetMinutes: -15,
    });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/position/);
    const secret = await call('schedule_prompt_around_events', {
      prompt: 'x',
      query: 'title:standup',
      offsetMinutes: -15,
      calendarIds: ['cal_secret'],
    });
    const missing = await call('schedule_prompt_around_events', {
      prompt: 'x',
      query: 'title:standup',
      offsetMinutes: -15,
      calendarIds: ['cal_nope'],
    });
    // A calendar the key cannot read is reported exactly like one that does not exist.
    expect(secret.text.replace('cal_secret', 'ID')).toBe(missing.text.replace('cal_nope', 'ID'));
    expect(scheduler.calls).toEqual([]);

    const ok = await call('schedule_prompt_around_events', {
      prompt: 'Brief me.',
      query: 'title:standup -response:declined',
      offsetMinutes: -15,
      calendarIds: ['Work', 'cal_old', 'cal_work'],
    });
    expect(ok.isError, ok.text).toBe(false);
    expect(ok.out).toMatchObject({ kind: 'around_events', status: 'active' });
    expect(scheduler.calls[0]?.args[0]).toMatchObject({
      schedule: {
        kind: 'around_events',
        query: 'title:standup -response:declined',
        offsetMinutes: -15,
        // Names resolved to ids, once each; a calendar whose account needs reconnecting is kept.
        calendarIds: ['cal_work', 'cal_old'],
      },
    });
    await call('schedule_prompt_around_events', { prompt: 'x', query: 'title:standup', offsetMinutes: 10 });
    expect(scheduler.calls[1]?.args[0]).toMatchObject({
      schedule: { kind: 'around_events', offsetMinutes: 10, calendarIds: undefined },
    });
  });

  it('lists with the filters asked for; cancelled ones only when asked', async () => {
    const scheduler = new MemoryScheduler(NOW, [WEBHOOK]);
    const { call } = await connect({ scheduler });
    const first = await call('schedule_prompt_cron', { prompt: 'A', cron: '0 9 * * *', agentId: 'agent-a' });
    await call('schedule_prompt_cron', { prompt: 'B', cron: '0 10 * * *', agentId: 'agent-b' });
    await call('cancel_scheduled_prompt', { scheduleId: first.out.scheduleId });

    const active = await call('list_scheduled_prompts', {});
    expect((active.out.schedules as { prompt: string }[]).map((s) => s.prompt)).toEqual(['B']);
    const all = await call('list_scheduled_prompts', { includeCancelled: true });
    expect(
      (all.out.schedules as { prompt: string; status: string }[]).map((s) => [s.prompt, s.status]),
    ).toEqual([
      ['A', 'cancelled'],
      ['B', 'active'],
    ]);
    await call('list_scheduled_prompts', { agentId: 'agent-b' });
    const lists = scheduler.calls.filter((c) => c.method === 'list').map((c) => c.args[0]);
    expect(lists).toEqual([
      { agentId: undefined, includeCancelled: false },
      { agentId: undefined, includeCancelled: true },
      { agentId: 'agent-b', includeCancelled: false },
    ]);
    // A list is written in one zone, the key's unless asked; each schedule keeps its own zone.
    expect(all.out.timeZone).toBe('Europe/Berlin');
    const listed = (all.out.schedules as Record<string, unknown>[])[1];
    expect(listed).toMatchObject({
      description: 'cron 0 10 * * * in UTC',
      timeZone: 'UTC',
      nextRun: '2026-11-24T11:00:00+01:00',
      createdAt: '2026-11-23T13:00:00+01:00',
      repetitionsDone: 0,
      lastDelivery: null,
      agentId: 'agent-b',
    });
    const inUtc = await call('list_scheduled_prompts', { timeZone: 'UTC' });
    expect(inUtc.out.timeZone).toBe('UTC');
    expect((inUtc.out.schedules as Record<string, unknown>[])[0]).toMatchObject({
      nextRun: '2026-11-24T10:00:00Z',
      createdAt: '2026-11-23T12:00:00Z',
    });
  });

  it('a second cancel succeeds and says it was already cancelled; an unknown id is not found', async () => {
    const { call } = await connect({ scheduler: new MemoryScheduler(NOW, [WEBHOOK]) });
    const created = await call('schedule_prompt_at', { prompt: 'x', at: '2026-12-01T09:00:00+01:00' });
    const scheduleId = created.out.scheduleId as string;
    const first = await call('cancel_scheduled_prompt', { scheduleId });
    expect(first.isError).toBe(false);
    expect(first.out).toEqual({
      scheduleId,
      status: 'cancelled',
      alreadyCancelled: false,
      message: `Cancelled scheduled prompt ${scheduleId} (once); it will not run again.`,
    });
    const second = await call('cancel_scheduled_prompt', { scheduleId });
    expect(second.isError).toBe(false);
    expect(second.out).toMatchObject({ status: 'cancelled', alreadyCancelled: true });
    expect(second.out.message).toBe(`Scheduled prompt ${scheduleId} was already cancelled; nothing changed.`);
    const unknown = await call('cancel_scheduled_prompt', { scheduleId: 'sch_missing' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toBe("Scheduled prompt 'sch_missing' was not found.");
  });

  it("targets, agents, tests and status: only the documented fields, instants in the key's zone", async () => {
    // A service that knows more of a target than the tools may show.
    const leaky = { ...WEBHOOK, url: 'https://hooks.example.com/h/secret-token', secret: 'whsec_x' };
    const scheduler = new MemoryScheduler(NOW, [leaky, LETTA]);
    const { call } = await connect({ scheduler });
    const targets = await call('list_delivery_targets', {});
    expect(targets.out.targets).toEqual([WEBHOOK, LETTA]);
    expect(targets.text).not.toMatch(/secret/);
    const agents = await call('list_letta_agents', { targetId: LETTA.targetId });
    expect(agents.out).toEqual({
      targetId: LETTA.targetId,
      agents: [{ id: 'agent-6b3c1f2e-8d4a-4e7b-9c21-5f0a7d3e9b14', name: 'Assistant' }],
    });
    const notLetta = await call('list_letta_agents', { targetId: WEBHOOK.targetId });
    expect(notLetta.isError).toBe(true);
    await call('test_delivery_target', {});
    await call('test_delivery_target', { targetId: LETTA.targetId });
    expect(scheduler.calls.filter((c) => c.method === 'testTarget').map((c) => c.args)).toEqual([
      [undefined],
      [LETTA.targetId],
    ]);
    const status = await call('scheduler_status', {});
    expect(status.out).toEqual({
      timeZone: 'Europe/Berlin',
      workers: [{ name: 'worker-1', host: 'calgate-1', lastSeen: '2026-11-23T12:59:30+01:00' }],
      queueDepth: 0,
      lagSeconds: 0,
      last24h: { delivered: 12, failed: 0, missed: 0, retrying: 0, blocked: 0 },
      recentFailures: [],
    });
  });

  it("answers 'unavailable' with a clear message where the gateway has no scheduler", async () => {
    const { call } = await connect();
    for (const { definition } of SCHEDULER_TOOLS) {
      const answer = await call(definition.name, definition.example as Record<string, unknown>);
      expect(answer.isError, definition.name).toBe(true);
      expect(answer.text).toBe(
        'Scheduled prompts are not available on this gateway: it runs without the scheduler.',
      );
    }
  });
});
