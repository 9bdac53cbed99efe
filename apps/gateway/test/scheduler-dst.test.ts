/**
 * Cron across real DST changes, in real time: Postgres and a `calgate worker` run on a clock
 * shifted (libfaketime) to seconds before a change, and the prompt arrives at a real HTTP receiver
 * when the shifted clock says so. Europe/Berlin springs forward (02:30 does not exist that night:
 * the prompt goes once, at 03:00 CEST); America/New_York falls back (01:30 happens twice: the
 * prompt goes once, and the next run is the next day's).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createSchedule, Scheduling, startBoss } from '@calgate/scheduler';
import { migrate, openDatabase, SchedulerRepository, SecretBox } from '@calgate/store';
import { type Receiver, startPostgres, startReceiver, until } from '@calgate/testkit';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../src/bin/calgate.ts', import.meta.url));
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup().catch(() => undefined);
  }
});

/** A database, a webhook target and one worker, all on a clock that reads `fakeStart` now. */
async function shiftedStack(fakeStart: number) {
  const offsetMs = fakeStart - Date.now();
  const faketime = { LD_PRELOAD: LIBFAKETIME, FAKETIME: `${(offsetMs / 1000).toFixed(3)}` };
  const postgres = await startPostgres({ env: faketime });
  cleanups.push(() => postgres.stop());
  const db = openDatabase({ url: postgres.url, max: 2 });
  cleanups.push(() => db.close());
  await migrate(db.pool);
  const key = randomBytes(32);
  const repository = new SchedulerRepository(db, new SecretBox([key]));
  await db.prisma.tenant.create({ data: { id: 'tnt_dst', name: 'DST' } });
  await db.prisma.apiKey.create({
    data: { id: 'key_dst', tenantId: 'tnt_dst', name: 'dst', prefix: 'cg_live_dst', hash: randomBytes(32) },
  });
  let secret = '';
  const receiver: Receiver = await startReceiver(() => secret);
  cleanups.push(() => receiver.close());
  const target = await repository.targets.create('tnt_dst', {
    kind: 'webhook',
    name: 'hook',
    url: receiver.url,
  });
  secret = target.secret ?? '';
  const boss = await startBoss({ databaseUrl: postgres.url, role: 'producer' });
  cleanups.push(() => boss.stop({ graceful: false }));
  const worker: ChildProcess = spawn(process.execPath, [BIN, 'worker'], {
    env: {
      PATH: process.env.PATH,
      ...faketime,
      DATABASE_URL: postgres.url,
      ENCRYPTION_KEY: key.toString('base64'),
      TARGETS_ALLOW_PRIVATE: 'true',
      WORKER_PORT: '0',
      MIGRATE_ON_START: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(
    () =>
      new Promise((resolve) => {
        worker.once('exit', resolve);
        worker.kill('SIGKILL');
      }),
  );
  let out = '';
  worker.stdout?.on('data', (chunk) => (out += String(chunk)));
  worker.stderr?.on('data', (chunk) => (out += String(chunk)));
  await until(() => out.includes('calgate worker running'), 30_000);
  const fakeNow = () => Date.now() + offsetMs;
  return { repository, receiver, scheduling: new Scheduling(boss, repository), fakeNow, offsetMs };
}

async function cron(stack: Awaited<ReturnType<typeof shiftedStack>>, expression: string, timeZone: string) {
  const made = createSchedule({ kind: 'cron', cron: expression, timeZone }, stack.fakeNow());
  if (!made.ok) {
    throw made.error;
  }
  return stack.scheduling.create('tnt_dst', {
    keyId: 'key_dst',
    targetId: (await stack.repository.targets.list('tnt_dst'))[0]?.id ?? null,
    prompt: `${expression} in ${timeZone}`,
    spec: made.value.schedule.spec as never,
    nextRunAt: new Date(made.value.firstRun),
  });
}

describe('cron across DST changes, in real time', () => {
  beforeAll(() => {
    if (!existsSync(LIBFAKETIME)) {
      throw new Error(`${LIBFAKETIME} is missing: install the Debian package libfaketime (as .ci/run does).`);
    }
  });

  it('Europe/Berlin springs forward: 02:30 is skipped that night, so the prompt goes once at 03:00 CEST', async () => {
    const change = Date.parse('2026-03-29T01:00:00Z'); // 02:00 CET becomes 03:00 CEST
    const stack = await shiftedStack(change - 15_000);
    const created = await cron(stack, '30 2 * * *', 'Europe/Berlin');
    expect(created.nextRunAt?.toISOString()).toBe('2026-03-29T01:00:00.000Z');
    const got = await until(() => stack.receiver.received[0], 45_000, 100);
    // (Its webhook-timestamp is the shifted clock's, months old to this receiver, so the signature
    // check's five-minute tolerance refuses it here; signatures are checked in the other tests.)
    expect(got?.id).toBe(`${created.id}:2026-03-29T01:00:00Z`);
    expect(got?.body.occurrence).toBe('2026-03-29T01:00:00.000Z');
    // Received when the shifted clock read 03:00 CEST, within 2 s.
    const lag = (got?.at ?? 0) + stack.offsetMs - change;
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(2_000);
    const after = await until(async () => {
      const stored = await stack.repository.schedules.get('tnt_dst', created.id);
      return stored?.repetitionsDone === 1 ? stored : undefined;
    });
    // The next night has 02:30 again.
    expect(after?.nextRunAt?.toISOString()).toBe('2026-03-30T00:30:00.000Z');
  }, 90_000);

  it('America/New_York falls back: 01:30 happens twice, the prompt goes once and next runs tomorrow', async () => {
    const first = Date.parse('2026-11-01T05:30:00Z'); // 01:30 EDT; 01:30 EST follows at 06:30Z
    const stack = await shiftedStack(first - 12_000);
    const created = await cron(stack, '30 1 * * *', 'America/New_York');
    expect(created.nextRunAt?.toISOString()).toBe('2026-11-01T05:30:00.000Z');
    const got = await until(() => stack.receiver.received[0], 45_000, 100);
    expect(got?.body.occurrence).toBe('2026-11-01T05:30:00.000Z');
    const lag = (got?.at ?? 0) + stack.offsetMs - first;
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(2_000);
    const after = await until(async () => {
      const stored = await stack.repository.schedules.get('tnt_dst', created.id);
      return stored?.repetitionsDone === 1 ? stored : undefined;
    });
    // Not the second 01:30 (06:30Z the same day): tomorrow's 01:30 EST.
    expect(after?.nextRunAt?.toISOString()).toBe('2026-11-02T06:30:00.000Z');
    expect(stack.receiver.received).toHaveLength(1);
  }, 90_000);
});
