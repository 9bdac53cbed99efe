import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type Worker } from '../src/index.ts';

describe('worker health endpoint', () => {
  let db: TestDatabase;
  let worker: Worker;
  let base: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    worker = await startWorker({
      db,
      log: pino({ level: 'silent' }),
      auditRetentionDays: 90,
      health: { host: '127.0.0.1', port: 0 },
    });
    base = worker.healthUrl ?? '';
  });
  afterAll(async () => {
    await worker.stop();
    await db.close();
  });

  it('answers GET /healthz with 200 and the job states', async () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = (await response.json()) as { status: string; jobs: { name: string }[] };
    expect(body.status).toBe('ok');
    expect(body.jobs.map((job) => job.name)).toEqual(['audit-retention', 'oauth-upkeep']);
  });

  it('answers other paths with 404 and other methods with 405', async () => {
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('stops listening once stopped', async () => {
    const other = await startWorker({
      db,
      log: pino({ level: 'silent' }),
      auditRetentionDays: 90,
      health: { host: '127.0.0.1', port: 0 },
    });
    const url = `${other.healthUrl}/healthz`;
    expect((await fetch(url)).status).toBe(200);
    await other.stop();
    await expect(fetch(url)).rejects.toThrow();
  });

  it('refuses to start when the port is taken', async () => {
    const port = Number(new URL(base).port);
    await expect(
      startWorker({
        db,
        log: pino({ level: 'silent' }),
        auditRetentionDays: 90,
        health: { host: '127.0.0.1', port },
      }),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});
