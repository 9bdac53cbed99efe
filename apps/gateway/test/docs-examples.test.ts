import { type LettaEmulator, startLettaEmulator } from '@calgate/letta-emulator';
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import { type Receiver, startReceiver } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

interface DocumentedTool {
  name: string;
  example: { tool: string; arguments: Record<string, unknown>; result?: unknown };
}

/**
 * Whether `actual` says at least what `expected` says: objects may have more fields, and an
 * expected array's items must each be found among the actual items.
 */
function contains(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) && expected.every((item) => actual.some((candidate) => contains(candidate, item)))
    );
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

/**
 * The order the examples run in: the availability examples first, on empty calendars; then the
 * writes; the rules examples on the events the writes use; delete_event last, as it removes the
 * event the others use. set_time_zone comes after everything, as it changes the key's zone.
 */
const ORDER = [
  'list_calendars',
  'get_current_time',
  'list_colors',
  'expand_rrule',
  'find_free_time',
  'find_free_slots',
  'check_availability',
  'get_availability',
  'book_slot',
  'list_bookings',
  'cancel_booking',
  'create_event',
  'quick_add_event',
  'create_calendar',
  'list_events',
  'search_events',
  'search',
  'fetch',
  'get_event',
  'create_project',
  'list_projects',
  'preview_rule',
  'create_rule',
  'create_classification_rule',
  'update_rule',
  'list_rules',
  'apply_rules',
  'classify_event',
  'get_time_summary',
  'delete_rule',
  'update_event',
  'batch_update_events',
  'manage_attendees',
  'respond_to_event',
  'delete_event',
  'import_events',
  'list_delivery_targets',
  'test_delivery_target',
  'list_letta_agents',
  'schedule_prompt_at',
  'schedule_prompt_cron',
  'schedule_prompt_every',
  'schedule_prompt_rrule',
  'schedule_prompt_around_events',
  'list_scheduled_prompts',
  'cancel_scheduled_prompt',
  'scheduler_status',
  'set_time_zone',
];

describe('every example in /api/docs runs as documented and returns what it says', () => {
  let gw: TestGateway;
  let client: Client;
  let tools: DocumentedTool[];
  let primary: string;
  let receiver: Receiver;
  let webhookSecret = '';
  let letta: LettaEmulator;
  /** Ids only a running gateway can know (a booking's, a search result's), by tool. */
  const runtimeIds: Record<string, Record<string, unknown>> = {};

  beforeAll(async () => {
    gw = await startTestGateway({ ...HIGH_RATE_LIMITS, TARGETS_ALLOW_PRIVATE: 'true' });
    const owner = await gw.seedTenant('Docs');
    await gw.runtime.keys.setDefaults(owner.tenantId, owner.keyId, {
      toolsets: ['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics'],
    });
    // The scheduler examples deliver to a real receiver and a Letta emulator with an "Assistant".
    receiver = await startReceiver(() => webhookSecret);
    letta = await startLettaEmulator({
      seed: { apiKeys: ['letta-docs-key'], agents: [{ name: 'Assistant' }] },
    });
    const { targets } = gw.runtime.scheduler;
    const hook = await targets.create(owner.tenantId, {
      kind: 'webhook',
      name: 'Ops webhook',
      url: receiver.url,
    });
    webhookSecret = hook.secret ?? '';
    const lettaTarget = await targets.create(owner.tenantId, {
      kind: 'letta',
      name: 'Letta',
      url: letta.url,
      apiKey: 'letta-docs-key',
    });
    const hookId = { targetId: hook.target.id };
    for (const name of ORDER.filter(
      (tool) => tool.startsWith('schedule_prompt_') || tool === 'test_delivery_target',
    )) {
      runtimeIds[name] = hookId;
    }
    runtimeIds.list_letta_agents = { targetId: lettaTarget.target.id };
    primary = await gw.localCalendar(owner.tenantId, 'Calgate', 'America/New_York');
    const team = await gw.localCalendar(owner.tenantId, 'Team Berlin', 'Europe/Berlin');
    for (const calendarId of [primary, team]) {
      await gw.grant(owner.tenantId, owner.keyId, calendarId, { read: true, write: true });
    }
    client = await connectClient(gw.mcpUrl, owner.secret);
    tools = ((await (await fetch(`${gw.url}/api/docs`)).json()) as { tools: DocumentedTool[] }).tools;
  });

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await receiver?.close();
    await letta?.close();
  });

  /** The events the write examples name by id, as a person's calendar would hold them. */
  async function seedNamedEvents() {
    const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
    const ref = { id: primary, externalId: primary, timeZone: 'America/New_York' };
    const at = (time: string) => ({ dateTime: `2026-04-21T${time}:00-04:00`, timeZone: 'America/New_York' });
    await provider.insertEvent(ref, {
      id: 'abc123def456',
      summary: 'Quarterly review',
      start: at('10:00'),
      end: at('11:00'),
      attendees: [{ email: 'dave@example.com' }, { email: primary, self: true }],
    });
    await provider.insertEvent(ref, {
      id: 'event1',
      summary: 'Focus time',
      start: at('13:00'),
      end: at('14:00'),
    });
    await provider.insertEvent(ref, { id: 'event2', summary: 'Sync', start: at('14:00'), end: at('14:30') });
  }

  it('documents an example, with its result, for every tool, and each runs in order', async () => {
    expect(tools.map((tool) => tool.name).sort()).toEqual([...ORDER].sort());
    for (const name of ORDER) {
      const tool = tools.find((candidate) => candidate.name === name) as DocumentedTool;
      if (name === 'list_events') {
        await seedNamedEvents();
      }
      const args = { ...tool.example.arguments, ...runtimeIds[name] };
      const result = await client.callTool({ name, arguments: args });
      const out = result.structuredContent as Record<string, unknown>;
      expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
      expect(tool.example.result, `${name} documents its result`).toBeDefined();
      expect(contains(out, tool.example.result), `${name} returned ${JSON.stringify(out)}`).toBe(true);
      if (name === 'book_slot') {
        runtimeIds.cancel_booking = { bookingId: out.bookingId };
      }
      if (name === 'create_project') {
        const projectId = (out.project as { id: string }).id;
        runtimeIds.create_rule = { projectId };
        runtimeIds.create_classification_rule = { projectId };
      }
      if (name === 'create_rule') {
        runtimeIds.update_rule = { ruleId: (out.rule as { id: string }).id };
      }
      if (name === 'create_classification_rule') {
        runtimeIds.delete_rule = { ruleId: (out.rule as { id: string }).id };
      }
      if (name === 'schedule_prompt_cron') {
        runtimeIds.cancel_scheduled_prompt = { scheduleId: out.scheduleId };
      }
      if (name === 'search') {
        const [first] = JSON.parse(textOf(result)).results as { id: string }[];
        runtimeIds.fetch = { id: first?.id };
      }
    }
  });
});
