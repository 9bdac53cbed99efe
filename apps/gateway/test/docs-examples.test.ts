import { type LettaEmulator, startLettaEmulator } from '@calgate/letta-emulator';
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import { type Receiver, startReceiver } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';
import {
  type ConnectedOutlook,
  connectOutlookAccount,
  startTestMicrosoftEmulator,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';

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

/** Where the examples run: a gateway, its key's MCP client, and what the setup knows. */
interface ExampleRig {
  gw: TestGateway;
  client: Client;
  tools: DocumentedTool[];
  /** Ids only a running gateway can know (a booking's, a search result's), by tool. */
  runtimeIds: Record<string, Record<string, unknown>>;
  /** Puts the events the write examples name by id into the key's calendar. */
  seedNamedEvents(): Promise<void>;
  /**
   * The calendar's own ids for the ids the examples name ('abc123def456' …), where the calendar
   * chooses ids itself (Outlook): put into each example's arguments and documented result.
   */
  ids?: Record<string, string>;
  /** Why an example's documented result cannot hold on this kind of calendar, by tool. */
  exempt?: Record<
    string,
    { reason: string; check(result: { isError?: unknown; text: string; out: Record<string, unknown> }): void }
  >;
}

interface DeliveryRig {
  receiver: Receiver;
  letta: LettaEmulator;
  close(): Promise<void>;
}

/**
 * The scheduler's delivery targets the examples use: a real receiver and a Letta emulator with an
 * "Assistant"; their ids go into `runtimeIds`.
 */
async function deliveryTargets(
  gw: TestGateway,
  tenantId: string,
  runtimeIds: Record<string, Record<string, unknown>>,
): Promise<DeliveryRig> {
  let webhookSecret = '';
  const receiver = await startReceiver(() => webhookSecret);
  const letta = await startLettaEmulator({
    seed: { apiKeys: ['letta-docs-key'], agents: [{ name: 'Assistant' }] },
  });
  const { targets } = gw.runtime.scheduler;
  const hook = await targets.create(tenantId, { kind: 'webhook', name: 'Ops webhook', url: receiver.url });
  webhookSecret = hook.secret ?? '';
  const lettaTarget = await targets.create(tenantId, {
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
  return {
    receiver,
    letta,
    close: async () => {
      await receiver.close();
      await letta.close();
    },
  };
}

/** `value` with every string that is a key of `ids` replaced by its value. */
function withIds(value: unknown, ids: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return ids[value] ?? value;
  }
  if (Array.isArray(value)) {
    return value.map((item) => withIds(item, ids));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withIds(item, ids)]));
  }
  return value;
}

/** Runs every documented example in ORDER and checks each answer against its documented result. */
async function runExamples(rig: ExampleRig) {
  const { client, tools, runtimeIds } = rig;
  expect(tools.map((tool) => tool.name).sort()).toEqual([...ORDER].sort());
  for (const name of ORDER) {
    const tool = tools.find((candidate) => candidate.name === name) as DocumentedTool;
    if (name === 'list_events') {
      await rig.seedNamedEvents();
    }
    const ids = rig.ids ?? {};
    const args = {
      ...(withIds(tool.example.arguments, ids) as Record<string, unknown>),
      ...runtimeIds[name],
    };
    const result = await client.callTool({ name, arguments: args });
    const out = result.structuredContent as Record<string, unknown>;
    expect(tool.example.result, `${name} documents its result`).toBeDefined();
    const expected = withIds(tool.example.result, ids);
    const exempt = rig.exempt?.[name];
    if (exempt !== undefined) {
      expect(exempt.reason, `${name} says why its example cannot hold here`).not.toBe('');
      exempt.check({ isError: result.isError, text: textOf(result), out });
      continue;
    }
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    expect(contains(out, expected), `${name} returned ${JSON.stringify(out)}`).toBe(true);
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
}

const DOC_TOOLSETS = ['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics'];

describe('every example in /api/docs runs as documented and returns what it says', () => {
  let gw: TestGateway;
  let client: Client;
  let tools: DocumentedTool[];
  let primary: string;
  let delivery: DeliveryRig;
  const runtimeIds: Record<string, Record<string, unknown>> = {};

  beforeAll(async () => {
    gw = await startTestGateway({ ...HIGH_RATE_LIMITS, TARGETS_ALLOW_PRIVATE: 'true' });
    const owner = await gw.seedTenant('Docs');
    await gw.runtime.keys.setDefaults(owner.tenantId, owner.keyId, { toolsets: DOC_TOOLSETS });
    delivery = await deliveryTargets(gw, owner.tenantId, runtimeIds);
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
    await delivery?.close();
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
    await runExamples({ gw, client, tools, runtimeIds, seedNamedEvents });
  });
});

/**
 * The examples Outlook cannot answer as documented, why, and what the answer says instead: each
 * says so in its own words, and everything else in the call still happens.
 */
const OUTLOOK_EXEMPT: NonNullable<ExampleRig['exempt']> = {
  batch_update_events: {
    reason:
      "colorId '5' is one of Google's event colours; Outlook colours events by category, not by colour id",
    check({ isError, out }) {
      expect(isError).toBeFalsy();
      expect(out).toMatchObject({ succeeded: 1, failed: 1 });
      const [first, second] = out.results as { ok: boolean; error?: { code: string; message: string } }[];
      expect(first?.ok).toBe(true);
      expect(second?.error).toEqual({
        code: 'invalid_argument',
        message:
          'Outlook calendars do not take colorId (Outlook colours events by category); leave colorId out.',
      });
    },
  },
};

describe('every example in /api/docs runs against an Outlook calendar (Graph emulator) as documented', () => {
  const ANN = 'ann@contoso.com';
  const EASTERN = 'Eastern Standard Time';
  let ms: TestMicrosoftEmulator;
  let gw: TestGateway;
  let client: Client;
  let tools: DocumentedTool[];
  let outlook: ConnectedOutlook;
  let delivery: DeliveryRig;
  const runtimeIds: Record<string, Record<string, unknown>> = {};
  /** Outlook chooses event ids itself: its ids for the examples' 'abc123def456', 'event1' and 'event2'. */
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ms = await startTestMicrosoftEmulator({
      users: [
        {
          email: ANN,
          displayName: 'Ann Example',
          timeZone: EASTERN,
          calendars: [{ name: 'Calgate' }, { name: 'Team Berlin' }],
        },
      ],
    });
    gw = await startTestGateway({ ...ms.env, ...HIGH_RATE_LIMITS, TARGETS_ALLOW_PRIVATE: 'true' });
    const owner = await gw.seedTenant('Docs');
    await gw.runtime.keys.setDefaults(owner.tenantId, owner.keyId, { toolsets: DOC_TOOLSETS });
    // Outlook calendars take the workspace's zone when the mailbox settings may not be read.
    await gw.runtime.tenancy.updateTenant(owner.tenantId, { timeZone: 'America/New_York' });
    delivery = await deliveryTargets(gw, owner.tenantId, runtimeIds);
    outlook = await connectOutlookAccount(gw, ms, owner.tenantId, [owner.keyId], ANN, 'write');
    client = await connectClient(gw.mcpUrl, owner.secret);
    tools = ((await (await fetch(`${gw.url}/api/docs`)).json()) as { tools: DocumentedTool[] }).tools;
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await delivery?.close();
    await ms?.close();
  });

  /** The events the write examples name by id, as Ann's Outlook calendar would hold them. */
  async function seedNamedEvents() {
    const calendar = outlook.externalIds.Calgate as string;
    const at = (time: string) => ({ dateTime: `2026-04-21T${time}:00`, timeZone: EASTERN });
    ids.abc123def456 = ms.admin.addEvent(calendar, {
      subject: 'Quarterly review',
      start: at('10:00'),
      end: at('11:00'),
      attendees: [
        { emailAddress: { address: 'dave@example.com', name: 'Dave' }, type: 'required' },
        { emailAddress: { address: ANN, name: 'Ann Example' }, type: 'required' },
      ],
    }).id;
    ids.event1 = ms.admin.addEvent(calendar, {
      subject: 'Focus time',
      start: at('13:00'),
      end: at('14:00'),
    }).id;
    ids.event2 = ms.admin.addEvent(calendar, { subject: 'Sync', start: at('14:00'), end: at('14:30') }).id;
  }

  it('documents an example for every tool, and each runs in order on Outlook', async () => {
    await runExamples({ gw, client, tools, runtimeIds, seedNamedEvents, ids, exempt: OUTLOOK_EXEMPT });
  });
});
