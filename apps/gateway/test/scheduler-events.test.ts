/**
 * Prompts relative to calendar events, end to end: an MCP client schedules "2 minutes before each
 * event titled Acme"; the gateway's in-process worker delivers it to a real receiver; an event moved
 * after planning is not prompted at its old time, and is prompted at its new one.
 */
import { type Receiver, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';
import { SCHEDULER_ENV, SCHEDULER_TOOLSETS, startWebhookReceiver } from './scheduler-fixture.ts';
import { callOk } from './tool-calls.ts';

const MINUTE = 60_000;

describe('prompts relative to calendar events', () => {
  let gw: TestGateway;
  let client: Client;
  let receiver: Receiver;
  let calendarId: string;

  beforeAll(async () => {
    gw = await startTestGateway(SCHEDULER_ENV);
    const owner = await gw.seedTenant('Events');
    await gw.runtime.keys.setDefaults(owner.tenantId, owner.keyId, SCHEDULER_TOOLSETS);
    calendarId = await gw.localCalendar(owner.tenantId, 'Work', 'UTC');
    await gw.grant(owner.tenantId, owner.keyId, calendarId, { read: true, write: true });
    receiver = await startWebhookReceiver(gw, owner.tenantId);
    client = await connectClient(gw.mcpUrl, owner.secret);
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await receiver?.close();
  });

  const call = (name: string, args: Record<string, unknown>) => callOk(client, name, args);

  async function event(summary: string, start: number) {
    const out = await call('create_event', {
      calendarId,
      summary,
      start: { dateTime: new Date(start).toISOString() },
      end: { dateTime: new Date(start + 30 * MINUTE).toISOString() },
    });
    return String((out.event as { id: string } | undefined)?.id ?? out.id);
  }

  it('prompts 2 minutes before each matching event, with the event in the payload; others are ignored', async () => {
    const start = Date.now() + 2 * MINUTE + 4_000;
    const acme = await event('Acme sync', start);
    await event('Dentist', start);
    const made = await call('schedule_prompt_around_events', {
      prompt: 'Prepare for the Acme meeting',
      query: 'title:Acme',
      offsetMinutes: -2,
    });
    expect(made.kind).toBe('around_events');
    expect(Date.parse(String(made.nextRun))).toBe(start - 2 * MINUTE);
    const got = await until(
      () => receiver.received.find((r) => r.body.scheduleId === made.scheduleId),
      20_000,
    );
    expect(got?.verified).toBe(true);
    expect(got?.body).toMatchObject({
      type: 'prompt.due',
      prompt: 'Prepare for the Acme meeting',
      occurrence: new Date(start - 2 * MINUTE).toISOString(),
      event: { calendarId, eventId: acme },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received.filter((r) => r.body.scheduleId === made.scheduleId)).toHaveLength(1);
    await call('cancel_scheduled_prompt', { scheduleId: made.scheduleId });
  }, 60_000);

  it('an event moved after planning is not prompted at its old time, and is at its new one', async () => {
    const start = Date.now() + 2 * MINUTE + 4_000;
    const id = await event('Globex review', start);
    const made = await call('schedule_prompt_around_events', {
      prompt: 'Globex in two minutes',
      query: 'title:Globex',
      offsetMinutes: -2,
    });
    const moved = start + 10_000;
    await call('update_event', {
      calendarId,
      eventId: id,
      start: { dateTime: new Date(moved).toISOString() },
      end: { dateTime: new Date(moved + 30 * MINUTE).toISOString() },
    });
    // The occurrence planned for the old start is checked against the event and dropped.
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    const mine = () => receiver.received.filter((r) => r.body.scheduleId === made.scheduleId);
    expect(mine()).toHaveLength(0);
    // The minute's planning pass finds the new start and the prompt goes out for it.
    const got = await until(() => mine()[0], 80_000, 200);
    expect(got?.body.occurrence).toBe(new Date(moved - 2 * MINUTE).toISOString());
    await call('cancel_scheduled_prompt', { scheduleId: made.scheduleId });
  }, 120_000);
});
