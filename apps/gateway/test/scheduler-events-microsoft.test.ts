/**
 * Prompts relative to events on an Outlook calendar, end to end: an MCP client schedules "2
 * minutes before each event titled Acme" over a calendar of the Graph emulator; the gateway's
 * in-process worker plans from Graph's listing and delivers to a real receiver, with the event's
 * Outlook id in the payload.
 */
import { type Receiver, until } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, type TestGateway } from './harness.ts';
import { startOutlookCalendarGateway, type TestMicrosoftEmulator } from './microsoft-fixture.ts';
import { SCHEDULER_ENV, SCHEDULER_TOOLSETS, startWebhookReceiver } from './scheduler-fixture.ts';
import { callOk } from './tool-calls.ts';

const MINUTE = 60_000;
const ANN = 'ann@contoso.com';

describe('prompts relative to events on an Outlook calendar', () => {
  let ms: TestMicrosoftEmulator;
  let gw: TestGateway;
  let client: Client;
  let receiver: Receiver;
  let calendarId: string;

  beforeAll(async () => {
    const started = await startOutlookCalendarGateway({
      seed: { users: [{ email: ANN, timeZone: 'UTC' }] },
      env: SCHEDULER_ENV,
      tenant: 'Events',
      beforeConnect: (gateway, owner) =>
        gateway.runtime.keys.setDefaults(owner.tenantId, owner.keyId, SCHEDULER_TOOLSETS),
      connect: { email: ANN, access: 'write' },
    });
    ({ ms, gw } = started);
    const owner = started.tenant;
    calendarId = started.outlook.calendars.Calendar as string;
    receiver = await startWebhookReceiver(gw, owner.tenantId);
    client = await connectClient(gw.mcpUrl, owner.secret);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await receiver?.close();
    await ms?.close();
  });

  const call = (name: string, args: Record<string, unknown>) => callOk(client, name, args);

  async function event(summary: string, start: number) {
    const out = await call('create_event', {
      calendarId,
      summary,
      start: { dateTime: new Date(start).toISOString() },
      end: { dateTime: new Date(start + 30 * MINUTE).toISOString() },
    });
    return String(out.eventId);
  }

  it('prompts 2 minutes before each matching Outlook event, with the event in the payload; others are ignored', async () => {
    const start = Math.ceil((Date.now() + 2 * MINUTE + 4_000) / 1000) * 1000;
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
    await call('cancel_scheduled_prompt', { scheduleId: made.scheduleId });
  }, 60_000);
});
