/**
 * 1,000 scheduled prompts due in the same second, two `calgate worker` processes, one real webhook
 * receiver that verifies every signature: delivery lag after the due time (p50/p99/max) and
 * duplicates. Target: p99 ≤ 2 s, 0 duplicates (no crash in this run).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createSchedule, Scheduling, startBoss } from '@calgate/scheduler';
import { migrate, openDatabase, SchedulerRepository, SecretBox } from '@calgate/store';
import { startPostgres, startReceiver, until } from '@calgate/testkit';
import { machineSummary, today } from '../lib/machine.ts';

const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 1000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const root = fileURLToPath(new URL('../../', import.meta.url));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const postgres = await startPostgres();
const admin = openDatabase({ url: postgres.url, max: 1 });
await admin.pool.query('CREATE DATABASE bench');
await admin.close();
const url = postgres.url.replace(/\/postgres$/, '/bench');
const db = openDatabase({ url });
await migrate(db.pool);
const key = randomBytes(32);
const repository = new SchedulerRepository(db, new SecretBox([key]));
await db.prisma.tenant.create({ data: { id: 'tnt_bench', name: 'Bench' } });
await db.prisma.apiKey.create({
  data: {
    id: 'key_bench',
    tenantId: 'tnt_bench',
    name: 'bench',
    prefix: 'cg_live_bench',
    hash: randomBytes(32),
  },
});
let secret = '';
const receiver = await startReceiver(() => secret);
const target = await repository.targets.create('tnt_bench', {
  kind: 'webhook',
  name: 'bench',
  url: receiver.url,
});
secret = target.secret ?? '';
const boss = await startBoss({ databaseUrl: url, role: 'producer' });
const scheduling = new Scheduling(boss, repository);

const workers: ChildProcess[] = [];
for (let i = 0; i < WORKERS; i += 1) {
  const child = spawn(process.execPath, [`${root}apps/gateway/src/bin/calgate.ts`, 'worker'], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: url,
      ENCRYPTION_KEY: key.toString('base64'),
      TARGETS_ALLOW_PRIVATE: 'true',
      WORKER_PORT: '0',
      LOG_LEVEL: 'warn',
      MIGRATE_ON_START: 'false',
      ...(process.env.SCHEDULER_CONCURRENCY === undefined
        ? {}
        : { SCHEDULER_CONCURRENCY: process.env.SCHEDULER_CONCURRENCY }),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  workers.push(child);
}
await until(
  async () =>
    (await boss.getInstances()).filter((i) => i.name === 'calgate-worker' && i.live).length === WORKERS,
  30_000,
  200,
);

try {
  // Due at a whole second far enough ahead for every schedule to be stored first.
  const due = Math.ceil((Date.now() + 10_000 + SCHEDULES * 10) / 1000) * 1000;
  const made = createSchedule({ kind: 'once', at: new Date(due).toISOString() }, Date.now());
  if (!made.ok) {
    throw made.error;
  }
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < SCHEDULES) {
        next += 1;
        await scheduling.create('tnt_bench', {
          keyId: 'key_bench',
          targetId: target.target.id,
          prompt: 'bench',
          spec: made.value.schedule.spec as never,
          nextRunAt: new Date(due),
        });
      }
    }),
  );
  const createMs = performance.now() - started;
  if (Date.now() > due) {
    throw new Error('Schedules were not all stored before their due time; raise the lead time.');
  }
  await until(() => new Set(receiver.received.map((r) => r.id)).size >= SCHEDULES, 120_000, 100);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const received = receiver.received;
  const unique = new Set(received.map((r) => r.id)).size;
  const lags = received.map((r) => r.at - due).sort((a, b) => a - b);
  const unverified = received.filter((r) => !r.verified).length;
  const row = `| ${SCHEDULES} | ${WORKERS} | ${(SCHEDULES / (createMs / 1000)).toFixed(0)} | ${percentile(lags, 50)} | ${percentile(lags, 99)} | ${lags.at(-1)} | ${lags[0]} | ${received.length - unique} | ${unverified} |`;
  const text = [
    '',
    `## ${today()} — ${machineSummary()}`,
    '',
    `${SCHEDULES} once-schedules due in the same second, ${WORKERS} \`calgate worker\` processes (SCHEDULER_CONCURRENCY ${process.env.SCHEDULER_CONCURRENCY ?? 64} each), pg-boss on one Postgres, one local webhook receiver verifying signatures. Lag = receipt time − due time, ms.`,
    '',
    '| schedules | workers | stored/s | p50 lag | p99 lag | max lag | min lag | duplicates | bad signatures |',
    '|---|---|---|---|---|---|---|---|---|',
    row,
    '',
  ].join('\n');
  process.stdout.write(text);
  if (process.env.BENCH_RECORD !== '0') {
    await mkdir(`${root}bench/results`, { recursive: true });
    await appendFile(`${root}bench/results/scheduler.md`, text);
  }
} finally {
  for (const child of workers) {
    child.kill('SIGTERM');
  }
  await boss.stop({ graceful: false });
  await receiver.close();
  await db.close();
  await postgres.stop();
}
