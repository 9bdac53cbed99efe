/**
 * The scheduler tools end to end: the official MCP SDK client against a real gateway (Postgres,
 * pg-boss, a worker in process) that delivers to a real webhook receiver and a Letta emulator.
 * Ownership (a key's schedules are its own, another tenant's target is as good as missing),
 * target and agent resolution, validation that stores nothing, cancelling, zones, target tests.
 */
import { newId } from '@calgate/core';
import { type LettaEmulator, startLettaEmulator } from '@calgate/letta-emulator';
import { type Receiver, startReceiver, until } from '@calgate/testkit';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const TOOLSETS = ['calendar', 'scheduler'];
const LETTA_KEY = 'letta-scheduler-tools-key';
const DAY_MS = 86_400_000;

type Args = Record<string, unknown>;

interface Caller {
  tenantId: string;
  keyId: string;
  client: Client;
}

interface Listed {
  scheduleId: string;
  status: string;
  nextRun: string | null;
  targetId: string | null;
  agentId: string | null;
  prompt: string;
  lastDelivery: { status: string } | null;
}

/** An instant `ms` from now, RFC 3339 in UTC. */
const fromNow = (ms: number) => new Date(Date.now() + ms).toISOString();

describe('scheduler tools through the MCP SDK client', () => {
  let gw: TestGateway;
  let receiver: Receiver;
  let letta: LettaEmulator;
  let hookSecret = '';
  /** Tenant "Solo": one webhook target; key1, key2, a validation key and a zoned key. */
  let key1: Caller;
  let key2: Caller;
  let checker: Caller;
  let zoned: Caller;
  let hookId: string;
  /** Another tenant's webhook target. */
  let foreignTargetId: string;
  /** Tenant "Pair": two webhook targets. */
  let pair: Caller;
  let pairTargets: string[];
  /** Tenant "Agents": a Letta target with a default agent and one without. */
  let agents: Caller;
  let lettaDefault: string;
  let lettaBare: string;
  let defaultAgent: string;
  let chicago: string;
  let tokyo: string;
  const clients: Client[] = [];

  async function keyIn(tenantId: string, name: string): Promise<Caller> {
    const { key, secret } = await gw.runtime.keys.create(tenantId, { name, toolsets: TOOLSETS });
    const client = await connectClient(gw.mcpUrl, secret);
    clients.push(client);
    return { tenantId, keyId: key.id, client };
  }

  async function tenantWithKey(name: string): Promise<Caller> {
    const { tenantId } = await gw.seedTenant(name);
    return keyIn(tenantId, `${name} agent`);
  }

  /** A webhook target on the receiver; the receiver verifies signatures with Solo's secret only. */
  async function webhook(tenantId: string, name: string): Promise<{ id: string; secret: string }> {
    const { target, secret } = await gw.runtime.scheduler.targets.create(tenantId, {
      kind: 'webhook',
      name,
      url: receiver.url,
    });
    return { id: target.id, secret: secret ?? '' };
  }

  function call(caller: Caller, name: string, args: Args, meta?: Args): Promise<CallToolResult> {
    return caller.client.callTool({
      name,
      arguments: args,
      ...(meta === undefined ? {} : { _meta: meta }),
    }) as Promise<CallToolResult>;
  }

  async function ok(caller: Caller, name: string, args: Args, meta?: Args): Promise<Record<string, unknown>> {
    const result = await call(caller, name, args, meta);
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  }

  async function refused(caller: Caller, name: string, args: Args, meta?: Args): Promise<string> {
    const result = await call(caller, name, args, meta);
    expect(result.isError, `${name} was not refused: ${JSON.stringify(result.structuredContent)}`).toBe(true);
    return textOf(result);
  }

  async function listed(caller: Caller, args: Args = {}): Promise<Listed[]> {
    return (await ok(caller, 'list_scheduled_prompts', args)).schedules as Listed[];
  }

  async function storedFor(caller: Caller): Promise<number> {
    const { rows } = await gw.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM schedules WHERE tenant_id = $1 AND key_id = $2',
      [caller.tenantId, caller.keyId],
    );
    return rows[0]?.n ?? -1;
  }

  beforeAll(async () => {
    gw = await startTestGateway({
      ...HIGH_RATE_LIMITS,
      TARGETS_ALLOW_PRIVATE: 'true',
      WORKER_IN_PROCESS: 'true',
    });
    receiver = await startReceiver(() => hookSecret);
    letta = await startLettaEmulator({
      seed: { apiKeys: [LETTA_KEY], agents: [{ name: 'Assistant' }, { name: 'Helper' }] },
    });
    const seededAgent = letta.admin.agents().find((agent) => agent.name === 'Assistant');
    defaultAgent = seededAgent?.id ?? '';

    key1 = await tenantWithKey('Solo');
    key2 = await keyIn(key1.tenantId, 'Solo second');
    checker = await keyIn(key1.tenantId, 'Solo checker');
    zoned = await keyIn(key1.tenantId, 'Solo zoned');
    const hook = await webhook(key1.tenantId, 'Solo hook');
    hookId = hook.id;
    hookSecret = hook.secret;
    chicago = await gw.localCalendar(key1.tenantId, 'Chicago Desk', 'America/Chicago');
    tokyo = await gw.localCalendar(key1.tenantId, 'Tokyo Desk', 'Asia/Tokyo');
    await gw.grant(key1.tenantId, zoned.keyId, chicago, { read: true, write: false });

    const other = await gw.seedTenant('Elsewhere');
    foreignTargetId = (await webhook(other.tenantId, 'Elsewhere hook')).id;

    pair = await tenantWithKey('Pair');
    pairTargets = [
      (await webhook(pair.tenantId, 'Pair first')).id,
      (await webhook(pair.tenantId, 'Pair second')).id,
    ];

    agents = await tenantWithKey('Agents');
    const { targets } = gw.runtime.scheduler;
    lettaDefault = (
      await targets.create(agents.tenantId, {
        kind: 'letta',
        name: 'Letta with default',
        url: letta.url,
        apiKey: LETTA_KEY,
        defaultAgentId: defaultAgent,
      })
    ).target.id;
    lettaBare = (
      await targets.create(agents.tenantId, {
        kind: 'letta',
        name: 'Letta bare',
        url: letta.url,
        apiKey: LETTA_KEY,
      })
    ).target.id;
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await gw?.stop();
    await receiver?.close();
    await letta?.close();
  });

  describe('ownership', () => {
    it("a second key of the tenant neither lists nor cancels the first key's schedule", async () => {
      const made = await ok(key1, 'schedule_prompt_at', { prompt: 'Key one reminder', at: fromNow(DAY_MS) });
      const scheduleId = String(made.scheduleId);
      expect(made).toMatchObject({ kind: 'once', status: 'active', targetId: hookId });

      expect((await listed(key2, { includeCancelled: true })).map((one) => one.scheduleId)).not.toContain(
        scheduleId,
      );
      const missing = newId('sch');
      const theirs = await refused(key2, 'cancel_scheduled_prompt', { scheduleId });
      const none = await refused(key2, 'cancel_scheduled_prompt', { scheduleId: missing });
      expect(theirs).toContain(scheduleId);
      expect(theirs.replaceAll(scheduleId, '<id>')).toBe(none.replaceAll(missing, '<id>'));
      expect(theirs).toMatch(/^No scheduled prompt sch_\w+ for this key\.$/);

      const still = (await listed(key1)).find((one) => one.scheduleId === scheduleId);
      expect(still?.status).toBe('active');
      await ok(key1, 'cancel_scheduled_prompt', { scheduleId });
    });

    it("another tenant's target id is refused exactly like a missing one, and nothing is stored", async () => {
      const before = await storedFor(key1);
      const missing = newId('tgt');
      const same = (tool: string, args: (targetId: string) => Args) => async () => {
        const foreign = await refused(key1, tool, args(foreignTargetId));
        const none = await refused(key1, tool, args(missing));
        expect(foreign).toContain(foreignTargetId);
        expect(foreign).not.toContain('Elsewhere');
        expect(foreign.replaceAll(foreignTargetId, '<id>')).toBe(none.replaceAll(missing, '<id>'));
        return foreign;
      };
      const scheduled = await same('schedule_prompt_at', (targetId) => ({
        prompt: 'Intruder',
        at: fromNow(DAY_MS),
        targetId,
      }))();
      expect(scheduled).toMatch(/^No delivery target tgt_\w+; see list_delivery_targets\.$/);
      await same('schedule_prompt_cron', (targetId) => ({
        prompt: 'Intruder',
        cron: '0 9 * * *',
        targetId,
      }))();
      await same('list_letta_agents', (targetId) => ({ targetId }))();
      await same('test_delivery_target', (targetId) => ({ targetId }))();
      expect(await storedFor(key1)).toBe(before);
      expect(receiver.received.filter((one) => JSON.stringify(one.body).includes(foreignTargetId))).toEqual(
        [],
      );
    });
  });

  describe('choosing the target', () => {
    it('a tenant with one target needs no targetId', async () => {
      const made = await ok(key1, 'schedule_prompt_every', { prompt: 'Hourly check', every: '1h' });
      expect(made.targetId).toBe(hookId);
      await ok(key1, 'cancel_scheduled_prompt', { scheduleId: made.scheduleId });
    });

    it('a tenant with two targets is told to choose, with their ids, and nothing is stored', async () => {
      const text = await refused(pair, 'schedule_prompt_at', { prompt: 'Which one?', at: fromNow(DAY_MS) });
      expect(text).toMatch(/^targetId is required: this tenant has 2 delivery targets \(/);
      for (const id of pairTargets) {
        expect(text).toContain(id);
      }
      expect(text).toContain('list_delivery_targets');
      expect(await storedFor(pair)).toBe(0);
      const named = await ok(pair, 'schedule_prompt_at', {
        prompt: 'This one',
        at: fromNow(DAY_MS),
        targetId: pairTargets[1],
      });
      expect(named.targetId).toBe(pairTargets[1]);
    });
  });

  describe('choosing the agent', () => {
    const at = () => fromNow(DAY_MS);
    const agentOf = async (args: Args, meta?: Args) =>
      (await ok(agents, 'schedule_prompt_at', { prompt: 'For an agent', at: at(), ...args }, meta)).agentId;

    it('the argument comes first, then _meta agentId, letta_agent_id and agent.id', async () => {
      const meta = { agentId: 'agent-from-meta' };
      expect(await agentOf({ targetId: lettaBare, agentId: 'agent-explicit' }, meta)).toBe('agent-explicit');
      expect(await agentOf({ targetId: lettaDefault, agentId: 'agent-explicit' })).toBe('agent-explicit');
      expect(await agentOf({ targetId: lettaBare }, meta)).toBe('agent-from-meta');
      expect(await agentOf({ targetId: lettaDefault }, meta)).toBe('agent-from-meta');
      expect(await agentOf({ targetId: lettaBare }, { letta_agent_id: 'agent-letta-meta' })).toBe(
        'agent-letta-meta',
      );
      expect(await agentOf({ targetId: lettaBare }, { agent: { id: 'agent-nested' } })).toBe('agent-nested');
      // An unusable _meta value is skipped, not trusted.
      expect(await agentOf({ targetId: lettaBare }, { agentId: 42, agent: { id: 'agent-nested' } })).toBe(
        'agent-nested',
      );
    });

    it("else the target's default, looked up at delivery: the worker prompts that agent", async () => {
      const prompt = `Delivered to the default agent ${Date.now()}`;
      const made = await ok(agents, 'schedule_prompt_at', { prompt, at: fromNow(0), targetId: lettaDefault });
      expect(made.agentId).toBeNull();
      const scheduleId = String(made.scheduleId);
      const message = await until(
        () => letta.admin.messages(defaultAgent).find((one) => one.text.includes(prompt)),
        30_000,
      );
      expect(message?.agentId).toBe(defaultAgent);
      const delivered = await until(async () =>
        (await listed(agents, { includeCancelled: true })).find(
          (one) => one.scheduleId === scheduleId && one.lastDelivery?.status === 'delivered',
        ),
      );
      expect(delivered?.status).toBe('finished');
    });

    it("after _meta, the key's default agent, before the target's; clearing it falls back again", async () => {
      const keyed = await keyIn(agents.tenantId, 'Agents keyed');
      await gw.runtime.keys.setDefaults(agents.tenantId, keyed.keyId, { defaultAgentId: 'agent-of-the-key' });
      const agentFor = async (args: Args, meta?: Args) =>
        (await ok(keyed, 'schedule_prompt_at', { prompt: 'For the key', at: at(), ...args }, meta)).agentId;
      expect(await agentFor({ targetId: lettaDefault })).toBe('agent-of-the-key');
      expect(await agentFor({ targetId: lettaBare })).toBe('agent-of-the-key');
      expect(await agentFor({ targetId: lettaBare }, { agent_id: 'agent-meta' })).toBe('agent-meta');
      await gw.runtime.keys.setDefaults(agents.tenantId, keyed.keyId, { defaultAgentId: null });
      expect(await agentFor({ targetId: lettaDefault })).toBeNull();
    });

    it('a Letta target with no agent anywhere is refused clearly, and nothing is stored', async () => {
      const before = await storedFor(agents);
      const text = await refused(agents, 'schedule_prompt_at', {
        prompt: 'Nobody to tell',
        at: at(),
        targetId: lettaBare,
      });
      expect(text).toBe(
        `Delivery target ${lettaBare} is a Letta server and no agent is known: pass agentId (see list_letta_agents), or set a default agent on the key or the target.`,
      );
      await refused(
        agents,
        'schedule_prompt_at',
        { prompt: 'Nobody', at: at(), targetId: lettaBare },
        { agentId: '' },
      );
      expect(await storedFor(agents)).toBe(before);
    });

    it("list_letta_agents lists the Letta server's agents; a webhook target is refused", async () => {
      const { agents: found } = (await ok(agents, 'list_letta_agents', { targetId: lettaBare })) as {
        agents: { id: string; name: string }[];
      };
      expect(found.map((agent) => agent.name).sort()).toEqual(['Assistant', 'Helper']);
      expect(found.map((agent) => agent.id)).toContain(defaultAgent);
      expect(await refused(key1, 'list_letta_agents', { targetId: hookId })).toBe(
        `Delivery target ${hookId} is a webhook, not a Letta server.`,
      );
    });
  });

  describe('validation', () => {
    const cases: [string, string, Args, RegExp][] = [
      [
        'a time in the past',
        'schedule_prompt_at',
        { at: '2020-01-01T09:00:00Z' },
        /^at '2020-01-01T09:00:00Z' is in the past \(it is now \d{4}-\d\d-\d\dT[\d:.]+Z\)\.$/,
      ],
      [
        'minute 61',
        'schedule_prompt_cron',
        { cron: '61 * * * *', timeZone: 'UTC' },
        /^Invalid cron expression '61 \* \* \* \*': minute field: 61 is out of range 0–59\.$/,
      ],
      [
        'an unknown zone',
        'schedule_prompt_cron',
        { cron: '0 9 * * *', timeZone: 'Mars/Olympus_Mons' },
        /^Invalid arguments for schedule_prompt_cron: 'timeZone': must be an IANA time zone such as Europe\/Berlin/,
      ],
      [
        'every 0s',
        'schedule_prompt_every',
        { every: '0s' },
        /^Invalid interval '0s': the interval must be at least 1 second\.$/,
      ],
      [
        'an empty prompt',
        'schedule_prompt_at',
        { prompt: '', at: fromNow(DAY_MS) },
        /^Invalid arguments for schedule_prompt_at: 'prompt' is too short/,
      ],
      [
        'a blank prompt',
        'schedule_prompt_at',
        { prompt: '   ', at: fromNow(DAY_MS) },
        /^The prompt is empty; give the text to deliver when the schedule fires\.$/,
      ],
      [
        'a prompt of 10,001 characters',
        'schedule_prompt_at',
        { prompt: 'x'.repeat(10_001), at: fromNow(DAY_MS) },
        /^The prompt is 10001 characters long; the limit is 10,000\.$/,
      ],
    ];

    it.each(cases)('%s is refused with its message', async (_label, tool, args, message) => {
      const text = await refused(checker, tool, { prompt: 'Valid prompt', ...args });
      expect(text).toMatch(message);
    });

    it('stores nothing for any of them', async () => {
      expect(await listed(checker, { includeCancelled: true })).toEqual([]);
      expect(await storedFor(checker)).toBe(0);
    });

    it('a prompt of exactly 10,000 characters is accepted', async () => {
      const made = await ok(checker, 'schedule_prompt_at', {
        prompt: 'x'.repeat(10_000),
        at: fromNow(DAY_MS),
      });
      await ok(checker, 'cancel_scheduled_prompt', { scheduleId: made.scheduleId });
    });
  });

  describe('cancelling', () => {
    it('a second cancel says it was already cancelled; lists hide cancelled ones unless asked', async () => {
      const made = await ok(key2, 'schedule_prompt_cron', {
        prompt: 'Weekly review',
        cron: '0 9 * * MON',
        timeZone: 'Europe/Berlin',
      });
      const scheduleId = String(made.scheduleId);
      expect((await listed(key2)).map((one) => one.scheduleId)).toContain(scheduleId);

      const first = await ok(key2, 'cancel_scheduled_prompt', { scheduleId });
      expect(first).toEqual({
        scheduleId,
        status: 'cancelled',
        alreadyCancelled: false,
        message: `Cancelled scheduled prompt ${scheduleId} (cron 0 9 * * MON in Europe/Berlin); it will not run again.`,
      });
      const second = await ok(key2, 'cancel_scheduled_prompt', { scheduleId });
      expect(second).toEqual({
        scheduleId,
        status: 'cancelled',
        alreadyCancelled: true,
        message: `Scheduled prompt ${scheduleId} was already cancelled; nothing changed.`,
      });

      expect((await listed(key2)).map((one) => one.scheduleId)).not.toContain(scheduleId);
      const all = await listed(key2, { includeCancelled: true });
      expect(all.find((one) => one.scheduleId === scheduleId)).toMatchObject({
        status: 'cancelled',
        nextRun: null,
        prompt: 'Weekly review',
      });
    });
  });

  describe('zones', () => {
    const cron = async () =>
      (await ok(zoned, 'schedule_prompt_cron', { prompt: 'Morning brief', cron: '0 9 * * *' })) as {
        scheduleId: string;
        timeZone: string;
        description: string;
        nextRun: string;
        upcoming: string[];
      };

    it("a cron without timeZone runs in the key's calendar's zone", async () => {
      const made = await cron();
      expect(made.timeZone).toBe('America/Chicago');
      expect(made.description).toBe('cron 0 9 * * * in America/Chicago');
      expect(made.nextRun).toMatch(/T09:00:00-0[56]:00$/);
      for (const run of made.upcoming) {
        expect(run).toMatch(/T09:00:00-0[56]:00$/);
      }
    });

    it("the key's default calendar, then the key's own zone, come first", async () => {
      await gw.grant(zoned.tenantId, zoned.keyId, tokyo, { read: true, write: false });
      await gw.runtime.keys.setDefaults(zoned.tenantId, zoned.keyId, { defaultCalendarId: tokyo });
      gw.forgetKeys(zoned.tenantId);
      const byDefault = await cron();
      expect(byDefault.timeZone).toBe('Asia/Tokyo');
      expect(byDefault.nextRun).toMatch(/T09:00:00\+09:00$/);

      await gw.runtime.keys.setDefaults(zoned.tenantId, zoned.keyId, { timeZone: 'Europe/Lisbon' });
      gw.forgetKeys(zoned.tenantId);
      const byKey = await cron();
      expect(byKey.description).toBe('cron 0 9 * * * in Europe/Lisbon');
      expect(byKey.nextRun).toMatch(/T09:00:00(Z|\+01:00)$/);
    });
  });

  describe('status', () => {
    it('scheduler_status shows the live worker, an empty backlog and the deliveries of the last 24 h', async () => {
      const status = (await ok(key1, 'scheduler_status', {})) as {
        workers: { name: string; host: string; lastSeen: string }[];
        queueDepth: number;
        lagSeconds: number;
        last24h: Record<string, number>;
      };
      expect(status.workers.length).toBeGreaterThanOrEqual(1);
      expect(Date.now() - Date.parse(status.workers[0]?.lastSeen ?? '')).toBeLessThan(120_000);
      expect(status.queueDepth).toBeGreaterThanOrEqual(0);
      expect(status.lagSeconds).toBeLessThan(60);
      expect(Object.keys(status.last24h).sort()).toEqual([
        'blocked',
        'delivered',
        'failed',
        'missed',
        'retrying',
      ]);
    });
  });

  describe('testing a target', () => {
    it('sends a signed target.test event the receiver verifies', async () => {
      const sent = Date.now();
      const result = await ok(key1, 'test_delivery_target', {});
      expect(result).toMatchObject({ targetId: hookId, ok: true, status: 200, error: null });
      const got = receiver.received.filter((one) => one.at >= sent);
      expect(got).toHaveLength(1);
      expect(got[0]?.verified).toBe(true);
      expect(got[0]?.id).toMatch(/^test_/);
      expect(got[0]?.body).toMatchObject({ type: 'target.test', targetId: hookId });
    });

    it('reports a failing receiver without its URL', async () => {
      receiver.answer = 500;
      try {
        const result = await ok(key1, 'test_delivery_target', { targetId: hookId });
        expect(result).toMatchObject({ targetId: hookId, ok: false, status: 500 });
        expect(String(result.error)).toContain(hookId);
        expect(String(result.error)).not.toContain(receiver.url);
      } finally {
        receiver.answer = 200;
      }
    });

    it('a Letta target is tested by listing its agents', async () => {
      const result = await ok(agents, 'test_delivery_target', { targetId: lettaDefault });
      expect(result).toMatchObject({ targetId: lettaDefault, ok: true, error: null });
    });
  });
});
