/**
 * The next run of a prompt relative to calendar events, as an agent and a person read it: with no
 * matching event in the planning window there is no next run (null, with the reason: the window and
 * how often it is checked), in the creation answer, list_scheduled_prompts and the dashboard's REST
 * API alike, and the worker's planning pass keeps it so; once an event matches, the next run is its
 * prompt's time and the reason is gone.
 */
import { Scheduling, startBoss } from '@calgate/scheduler';
import { EVENT_PLAN_HORIZON_MS } from '@calgate/tools';
import type { Client } from '@modelcontextprotocol/client';
import type { PgBoss } from 'pg-boss';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planSchedule } from '../src/scheduler-events.ts';
import { type Browser, call, sessionFor } from './api-client.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const MINUTE = 60_000;
/** A public address as a literal, accepted without OUTBOUND_ALLOW_PRIVATE; nothing is delivered here. */
const PUBLIC_HOOK = 'https://93.184.215.14:8443/hook';
const REASON = 'no event matching "title:Standup" in the next 48 h; checked every minute';

describe('the next run of a prompt relative to calendar events', () => {
  let gw: TestGateway;
  let client: Client;
  let ann: Browser;
  let boss: PgBoss;
  let tenantId = '';
  let calendarId = '';

  beforeAll(async () => {
    gw = await startTestGateway(HIGH_RATE_LIMITS);
    const owner = await gw.seedTenant('NextRun');
    tenantId = owner.tenantId;
    await gw.runtime.keys.setDefaults(owner.tenantId, owner.keyId, { toolsets: ['calendar', 'scheduler'] });
    calendarId = await gw.localCalendar(owner.tenantId, 'Work', 'Europe/Berlin');
    await gw.grant(owner.tenantId, owner.keyId, calendarId, { read: true, write: true });
    await gw.runtime.scheduler.targets.create(owner.tenantId, {
      kind: 'webhook',
      name: 'hook',
      url: PUBLIC_HOOK,
    });
    client = await connectClient(gw.mcpUrl, owner.secret);
    ann = await sessionFor(gw, owner.tenantId);
    boss = await startBoss({ databaseUrl: gw.db.url, role: 'producer' });
  });

  afterAll(async () => {
    await client?.close();
    await boss?.stop({ graceful: false });
    await gw?.stop();
  });

  async function tool(name: string, args: Record<string, unknown>) {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  }

  async function listed(scheduleId: string) {
    const { schedules } = (await tool('list_scheduled_prompts', {})) as {
      schedules: Record<string, unknown>[];
    };
    return schedules.find((one) => one.scheduleId === scheduleId);
  }

  async function viewed(scheduleId: string) {
    const answer = await call(gw, 'GET', '/api/v1/schedules', { as: ann });
    expect(answer.status).toBe(200);
    return (answer.body.schedules as Record<string, unknown>[]).find((one) => one.scheduleId === scheduleId);
  }

  /** The worker's minute pass over one schedule, as the sweep runs it. */
  async function sweep(scheduleId: string) {
    const record = await gw.runtime.scheduler.schedules.get(tenantId, scheduleId);
    expect(record).not.toBeNull();
    await planSchedule(
      {
        db: gw.runtime.db,
        repository: gw.runtime.scheduler,
        scheduling: new Scheduling(boss, gw.runtime.scheduler),
        providers: gw.runtime.deps.providers,
        log: pino({ level: 'silent' }),
      },
      record as NonNullable<typeof record>,
    );
  }

  it('with no matching event in the window: nextRun null with the reason, everywhere, after a sweep too', async () => {
    const made = await tool('schedule_prompt_around_events', {
      prompt: 'Prepare the standup notes',
      query: 'title:Standup',
      offsetMinutes: -10,
    });
    expect(made).toMatchObject({
      kind: 'around_events',
      status: 'active',
      nextRun: null,
      nextRunReason: REASON,
    });
    expect(made.upcoming).toEqual([]);
    const scheduleId = String(made.scheduleId);

    expect(await listed(scheduleId)).toMatchObject({
      status: 'active',
      nextRun: null,
      nextRunReason: REASON,
    });
    expect(await viewed(scheduleId)).toMatchObject({
      status: 'active',
      nextRun: null,
      nextRunReason: REASON,
    });

    await sweep(scheduleId);
    expect(await listed(scheduleId)).toMatchObject({
      status: 'active',
      nextRun: null,
      nextRunReason: REASON,
    });
    expect(await viewed(scheduleId)).toMatchObject({
      status: 'active',
      nextRun: null,
      nextRunReason: REASON,
    });

    // An event beyond the window changes nothing; one inside it gives the schedule its next run.
    const far = Date.now() + EVENT_PLAN_HORIZON_MS + 2 * 60 * MINUTE;
    await tool('create_event', {
      calendarId,
      summary: 'Standup (far)',
      start: { dateTime: new Date(far).toISOString() },
      end: { dateTime: new Date(far + 15 * MINUTE).toISOString() },
    });
    await sweep(scheduleId);
    expect(await listed(scheduleId)).toMatchObject({ nextRun: null, nextRunReason: REASON });

    const start = Math.ceil((Date.now() + 3 * 60 * MINUTE) / MINUTE) * MINUTE;
    await tool('create_event', {
      calendarId,
      summary: 'Standup',
      start: { dateTime: new Date(start).toISOString() },
      end: { dateTime: new Date(start + 15 * MINUTE).toISOString() },
    });
    await sweep(scheduleId);
    const planned = await listed(scheduleId);
    expect(Date.parse(String(planned?.nextRun))).toBe(start - 10 * MINUTE);
    expect(planned?.nextRunReason).toBeNull();
    const view = await viewed(scheduleId);
    expect(Date.parse(String(view?.nextRun))).toBe(start - 10 * MINUTE);
    expect(view?.nextRunReason).toBeNull();

    await tool('cancel_scheduled_prompt', { scheduleId });
    const cancelled = (await tool('list_scheduled_prompts', { includeCancelled: true })) as {
      schedules: Record<string, unknown>[];
    };
    expect(cancelled.schedules.find((one) => one.scheduleId === scheduleId)).toMatchObject({
      status: 'cancelled',
      nextRun: null,
      nextRunReason: 'cancelled',
    });
  }, 60_000);

  it('with a matching event: the creation answer gives its prompt time and no reason', async () => {
    const start = Math.ceil((Date.now() + 5 * 60 * MINUTE) / MINUTE) * MINUTE;
    await tool('create_event', {
      calendarId,
      summary: 'Board review',
      start: { dateTime: new Date(start).toISOString() },
      end: { dateTime: new Date(start + 60 * MINUTE).toISOString() },
    });
    const made = await tool('schedule_prompt_around_events', {
      prompt: 'Brief me for the board review',
      query: 'title:Board',
      offsetMinutes: -30,
      calendarIds: [calendarId],
    });
    expect(Date.parse(String(made.nextRun))).toBe(start - 30 * MINUTE);
    expect(made.nextRunReason).toBeNull();
    expect(await listed(String(made.scheduleId))).toMatchObject({
      nextRun: made.nextRun,
      nextRunReason: null,
    });
    await tool('cancel_scheduled_prompt', { scheduleId: made.scheduleId });
  }, 30_000);

  it('endAt bounds a schedule around events: an event after it gives no next run, and endAt is kept', async () => {
    const start = Math.ceil((Date.now() + 6 * 60 * MINUTE) / MINUTE) * MINUTE;
    await tool('create_event', {
      calendarId,
      summary: 'Retro',
      start: { dateTime: new Date(start).toISOString() },
      end: { dateTime: new Date(start + 60 * MINUTE).toISOString() },
    });
    const before = new Date(start - 2 * 60 * MINUTE).toISOString();
    const ended = await tool('schedule_prompt_around_events', {
      prompt: 'Collect retro topics',
      query: 'title:Retro',
      offsetMinutes: -15,
      endAt: before,
    });
    expect(Date.parse(String(ended.endAt))).toBe(Date.parse(before));
    expect(ended).toMatchObject({ nextRun: null, upcoming: [] });
    expect(ended.nextRunReason).toEqual(expect.any(String));

    const after = new Date(start + 24 * 60 * MINUTE).toISOString();
    const bounded = await tool('schedule_prompt_around_events', {
      prompt: 'Collect retro topics',
      query: 'title:Retro',
      offsetMinutes: -15,
      endAt: after,
    });
    expect(Date.parse(String(bounded.nextRun))).toBe(start - 15 * MINUTE);
    expect(Date.parse(String((await listed(String(bounded.scheduleId)))?.endAt))).toBe(Date.parse(after));

    const past = await client.callTool({
      name: 'schedule_prompt_around_events',
      arguments: { prompt: 'x', query: 'title:Retro', offsetMinutes: -15, endAt: '2020-01-01T00:00:00Z' },
    });
    expect(past.isError).toBe(true);
    expect(textOf(past)).toContain("endAt '2020-01-01T00:00:00Z' is not in the future");
    for (const made of [ended, bounded]) {
      await tool('cancel_scheduled_prompt', { scheduleId: made.scheduleId });
    }
  }, 30_000);

  it('other kinds report their next run without a reason', async () => {
    const made = await tool('schedule_prompt_cron', {
      prompt: 'Morning summary',
      cron: '0 9 * * *',
      timeZone: 'Europe/Berlin',
    });
    expect(made.nextRun).toEqual(expect.any(String));
    expect(made.nextRunReason).toBeNull();
    await tool('cancel_scheduled_prompt', { scheduleId: made.scheduleId });
  });
});
