import { startLettaEmulator } from '@calgate/letta-emulator';
import { occurrenceId } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import type { PgBoss } from 'pg-boss';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createSchedule,
  type DeliveryWorker,
  jobIdFor,
  PROMPT_QUEUE,
  Scheduling,
  startBoss,
  startDeliveryWorker,
} from '../src/index.ts';
import { type Receiver, seedTenant, startReceiver, until } from './engine-support.ts';

const log = pino({ level: process.env.TEST_LOG ?? 'silent' });
let db: TestDatabase;
let boss: PgBoss;
let seeded: Awaited<ReturnType<typeof seedTenant>>;
let receiver: Receiver;
let secret = '';
let targetId = '';
let worker: DeliveryWorker | undefined;
let scheduling: Scheduling;

beforeAll(async () => {
  db = await createTestDatabase();
  seeded = await seedTenant(db);
  receiver = await startReceiver(() => secret);
  const created = await seeded.repository.targets.create(seeded.tenant, {
    kind: 'webhook',
    name: 'hook',
    url: receiver.url,
  });
  secret = created.secret ?? '';
  targetId = created.target.id;
  boss = await startBoss({ databaseUrl: db.url, role: 'worker', superviseSeconds: 1 });
  scheduling = new Scheduling(boss, seeded.repository);
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await boss.stop({ graceful: false });
  await receiver.close();
  await db.close();
});

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  receiver.answer = 200;
  delete receiver.retryAfter;
  receiver.delayMs = 0;
});

async function run(graceMs = 3_600_000) {
  worker = await startDeliveryWorker({
    boss,
    repository: seeded.repository,
    log,
    allowPrivate: true,
    graceMs,
    concurrency: 8,
    timeoutMs: 2_000,
  });
}

async function schedule(request: Parameters<typeof createSchedule>[0], prompt = 'Review the calendar') {
  const made = createSchedule(request, Date.now());
  if (!made.ok) {
    throw made.error;
  }
  return scheduling.create(seeded.tenant, {
    keyId: seeded.key,
    targetId,
    prompt,
    spec: made.value.schedule.spec as never,
    nextRunAt: new Date(made.value.firstRun),
  });
}

const deliveriesOf = async (scheduleId: string) =>
  seeded.repository.deliveries.listBySchedule(seeded.tenant, scheduleId, { limit: 1000 });

describe('the delivery engine (pg-boss, real Postgres, real HTTP)', () => {
  it('derives one job id per attempt of an occurrence', () => {
    const id = occurrenceId('sch_x', new Date('2026-11-23T09:00:00Z'));
    expect(jobIdFor(id, 1)).toBe(jobIdFor(id, 1));
    expect(jobIdFor(id, 1)).not.toBe(jobIdFor(id, 2));
    expect(jobIdFor(id, 1)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('delivers a once schedule exactly once, signed, with the occurrence id as webhook-id, on time', async () => {
    await run();
    const at = new Date(Math.ceil((Date.now() + 1500) / 1000) * 1000);
    const created = await schedule({ kind: 'once', at: at.toISOString() }, 'Once, please');
    const mine = () => receiver.received.filter((r) => r.body.scheduleId === created.id);
    await until(() => mine().length === 1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(mine()).toHaveLength(1);
    const [got] = mine();
    expect(got?.verified).toBe(true);
    expect(got?.id).toBe(occurrenceId(created.id, at));
    expect(got?.body).toMatchObject({
      type: 'prompt.due',
      prompt: 'Once, please',
      repetition: 1,
      occurrence: at.toISOString(),
    });
    expect((got?.at ?? 0) - at.getTime()).toBeLessThan(2_000);
    expect((got?.at ?? 0) - at.getTime()).toBeGreaterThanOrEqual(0);
    const [row] = await deliveriesOf(created.id);
    expect(row).toMatchObject({ status: 'delivered', attempt: 1, statusCode: 200, repetition: 1 });
    const stored = await seeded.repository.schedules.get(seeded.tenant, created.id);
    expect(stored).toMatchObject({ status: 'finished', nextRunAt: null, repetitionsDone: 1 });
  });

  it('runs an interval schedule maxRepetitions times, numbering the repetitions', async () => {
    await run();
    const created = await schedule({ kind: 'interval', every: '1s', maxRepetitions: 3 });
    const mine = () => receiver.received.filter((r) => r.body.scheduleId === created.id);
    await until(() => mine().length === 3);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(mine().map((r) => r.body.repetition)).toEqual([1, 2, 3]);
    expect(new Set(mine().map((r) => r.id)).size).toBe(3);
    expect((await seeded.repository.schedules.get(seeded.tenant, created.id))?.status).toBe('finished');
  });

  it('retries a target that is down with the same webhook-id until it answers', async () => {
    receiver.answer = 503;
    receiver.retryAfter = '1';
    await run();
    const at = new Date(Date.now() + 500);
    const created = await schedule({ kind: 'once', at: at.toISOString() });
    await until(async () => (await deliveriesOf(created.id))[0]?.attempt === 3);
    expect((await deliveriesOf(created.id))[0]).toMatchObject({ status: 'retrying', statusCode: 503 });
    receiver.answer = 200;
    const mine = () => receiver.received.filter((r) => r.body.scheduleId === created.id);
    await until(() => mine().length === 1);
    expect(mine()[0]?.id).toBe(occurrenceId(created.id, new Date(created.nextRunAt?.getTime() ?? 0)));
    await until(async () => (await deliveriesOf(created.id))[0]?.status === 'delivered');
  });

  it('fails for good on a 4xx and disables the target on 410', async () => {
    await run();
    receiver.answer = 400;
    const first = await schedule({ kind: 'once', at: new Date(Date.now() + 300).toISOString() });
    await until(async () => (await deliveriesOf(first.id))[0]?.status === 'failed');
    expect((await deliveriesOf(first.id))[0]).toMatchObject({ attempt: 1, statusCode: 400 });

    receiver.answer = 410;
    const second = await schedule({ kind: 'once', at: new Date(Date.now() + 300).toISOString() });
    await until(async () => (await deliveriesOf(second.id))[0]?.status === 'failed');
    const target = await seeded.repository.targets.get(seeded.tenant, targetId);
    expect(target?.disabledAt).not.toBeNull();
    expect(target?.disabledReason).toMatch(/410/);
    await seeded.repository.targets.enable(seeded.tenant, targetId);
  });

  it('records occurrences older than the misfire grace as missed and carries on', async () => {
    // Due 10 s ago with a 2 s grace: missed. Every 1 s: the runs missed meanwhile are recorded too.
    const created = await seeded.repository.schedules.create(
      seeded.tenant,
      {
        keyId: seeded.key,
        targetId,
        prompt: 'late',
        spec: { kind: 'interval', everyMs: 1000, startAt: Date.now() - 10_000, maxRepetitions: 2 },
        nextRunAt: new Date(Math.floor((Date.now() - 10_000) / 1000) * 1000),
      },
      async (client, record) => {
        const { onClient, sendOccurrence } = await import('../src/engine/jobs.ts');
        const at = record.nextRunAt as Date;
        await sendOccurrence(
          boss,
          occurrenceId(record.id, at),
          { tenantId: seeded.tenant, scheduleId: record.id, at: at.getTime(), attempt: 1 },
          at,
          onClient(client),
        );
      },
    );
    await run(2_000);
    const mine = () => receiver.received.filter((r) => r.body.scheduleId === created.id);
    await until(() => mine().length === 2);
    const rows = await deliveriesOf(created.id);
    const missed = rows.filter((row) => row.status === 'missed');
    expect(missed.length).toBeGreaterThanOrEqual(7);
    expect(missed.every((row) => row.repetition === null)).toBe(true);
    expect(mine().map((r) => r.body.repetition)).toEqual([1, 2]);
  });

  it('delivers nothing once a cancellation wins the race with a due occurrence', async () => {
    await run();
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const created = await schedule({ kind: 'once', at: new Date(Date.now() + 400).toISOString() });
      await new Promise((resolve) => setTimeout(resolve, 350 + (i % 5) * 40));
      // A once schedule whose occurrence was claimed first has finished: nothing left to cancel.
      const cancelled = await scheduling.cancel(seeded.tenant, created.id).catch((error: Error) => {
        expect(error.message).toMatch(/has already finished; there is nothing left to cancel/);
        return { alreadyCancelled: false, finished: true };
      });
      const cancelledAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const sent = receiver.received.filter((r) => r.body.scheduleId === created.id);
      const [row] = await deliveriesOf(created.id);
      // Either the occurrence was claimed before the cancel (and then delivered once), or nothing
      // was sent at all; never a claim after the cancel.
      if (row === undefined) {
        expect(sent).toHaveLength(0);
        expect(cancelled.alreadyCancelled).toBe(false);
        expect('finished' in cancelled, 'a finished schedule has its occurrence recorded').toBe(false);
        outcomes.push('cancelled first');
      } else {
        expect(row.createdAt.getTime()).toBeLessThanOrEqual(cancelledAt);
        expect(sent.length).toBeLessThanOrEqual(1);
        outcomes.push('claimed first');
      }
    }
    expect(outcomes).toHaveLength(10);
  }, 60_000);

  it('replays a failed occurrence with the same webhook-id', async () => {
    await run();
    receiver.answer = 422;
    const created = await schedule({ kind: 'once', at: new Date(Date.now() + 300).toISOString() });
    await until(async () => (await deliveriesOf(created.id))[0]?.status === 'failed');
    receiver.answer = 200;
    const [row] = await deliveriesOf(created.id);
    await scheduling.replay(seeded.tenant, row?.occurrenceId ?? '');
    const mine = () => receiver.received.filter((r) => r.body.scheduleId === created.id);
    await until(() => mine().length === 1);
    expect(mine()[0]?.id).toBe(row?.occurrenceId);
    await until(async () => (await deliveriesOf(created.id))[0]?.status === 'delivered');
  });

  it('delivers to a Letta agent through the emulator, once, with the occurrence id as otid', async () => {
    const agentId = 'agent-11111111-2222-4333-8444-555555555555';
    const letta = await startLettaEmulator({
      seed: { apiKeys: ['letta-key'], agents: [{ id: agentId, name: 'Assistant' }] },
    });
    try {
      const target = await seeded.repository.targets.create(seeded.tenant, {
        kind: 'letta',
        name: 'Letta',
        url: letta.url,
        apiKey: 'letta-key',
        defaultAgentId: agentId,
      });
      await run();
      const at = new Date(Date.now() + 500);
      const made = createSchedule({ kind: 'once', at: at.toISOString() }, Date.now());
      if (!made.ok) {
        throw made.error;
      }
      const created = await scheduling.create(seeded.tenant, {
        keyId: seeded.key,
        targetId: target.target.id,
        prompt: 'Check the calendar for tomorrow',
        spec: made.value.schedule.spec as never,
        nextRunAt: new Date(made.value.firstRun),
      });
      await until(async () => (await deliveriesOf(created.id))[0]?.status === 'delivered');
      const messages = letta.admin.messages(agentId);
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatchObject({ role: 'user', text: 'Check the calendar for tomorrow' });
      expect(messages[0]?.otid).toBe(occurrenceId(created.id, new Date(made.value.firstRun)));
    } finally {
      await letta.close();
    }
  });

  it("ends a revoked key's schedules at their next occurrence, delivering nothing more", async () => {
    await run();
    const made = createSchedule({ kind: 'interval', every: '1s' }, Date.now());
    if (!made.ok) {
      throw made.error;
    }
    const created = await scheduling.create(seeded.tenant, {
      keyId: seeded.otherKey,
      targetId,
      prompt: 'every second',
      spec: made.value.schedule.spec as never,
      nextRunAt: new Date(made.value.firstRun),
    });
    const mine = () => receiver.received.filter((r) => r.body.scheduleId === created.id);
    await until(() => mine().length >= 2);
    await db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [seeded.otherKey]);
    const revokedAt = Date.now();
    await until(
      async () => (await seeded.repository.schedules.get(seeded.tenant, created.id))?.status === 'cancelled',
    );
    const count = mine().length;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(mine()).toHaveLength(count);
    expect(mine().every((r) => r.at <= revokedAt + 1_500)).toBe(true);
  });

  it('keeps the jobs in its own queue', async () => {
    const queue = await boss.getQueue(PROMPT_QUEUE);
    expect(queue?.name).toBe(PROMPT_QUEUE);
    expect(queue?.heartbeatSeconds).toBe(10);
  });
});
