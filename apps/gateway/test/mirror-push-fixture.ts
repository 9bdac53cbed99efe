/**
 * A gateway that runs its worker in process with push forced on over loopback (MIRROR_PUSH=true,
 * PUBLIC_URL its own address), the Google emulator with an OAuth client and a service account,
 * and helpers to read what the mirror holds. Polling is set to an hour, so whatever reaches the
 * mirror quickly came by the connect hook or a push.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmulatorSeed, GoogleEmulator } from '@calgate/google-emulator';
import { GOOGLE_SCOPES } from '@calgate/providers';
import { startBoss } from '@calgate/scheduler';
import { until } from '@calgate/testkit';
import type { PgBoss } from 'pg-boss';
import { MIRROR_SYNC_QUEUE } from '../src/mirror/jobs.ts';
import { MIRROR_PLAN_QUEUE } from '../src/mirror/planner.ts';
import { startGatewayWithGoogle } from './google-fixture.ts';
import type { TestGateway } from './harness.ts';

export const CLIENT = { clientId: 'mirror-push-client', clientSecret: 'mirror-push-secret' };
export const ROBOT = 'robot@calgate-test.iam.gserviceaccount.com';

export interface PushStack {
  emulator: GoogleEmulator;
  gw: TestGateway;
  /** The gateway's base URL (its PUBLIC_URL). */
  url: string;
  tenantId: string;
  /** A producer on the gateway's queues, to ask for a planner pass. */
  boss: PgBoss;
  refreshToken(email: string): string;
  /** A Calendar API request as the account itself (someone using Google directly). */
  asAccount(
    email: string,
    method: 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<Response>;
  calendarIdOf(externalId: string): Promise<string>;
  summaries(calendarId: string): Promise<string[]>;
  /** The reasons of every sync job queued for the calendar so far. */
  syncReasons(calendarId: string): Promise<string[]>;
  /** Asks for a planner pass (with push on, it also renews, stops and opens channels). */
  planPass(): Promise<void>;
  count(table: string, calendarId: string): Promise<number>;
  close(): Promise<void>;
}

export async function startPushStack(
  seed: Omit<EmulatorSeed, 'oauthClients'>,
  env: Record<string, string> = {},
): Promise<PushStack> {
  const withRobot = { ...seed, serviceAccounts: [...(seed.serviceAccounts ?? []), { email: ROBOT }] };
  const started = await startGatewayWithGoogle(CLIENT, withRobot, async (emulator) => {
    const dir = await mkdtemp(join(tmpdir(), 'calgate-push-'));
    const keyFile = join(dir, 'key.json');
    await writeFile(keyFile, JSON.stringify(emulator.admin.serviceAccountKey(ROBOT)), { mode: 0o600 });
    return {
      GOOGLE_SERVICE_ACCOUNT_KEY_FILE: keyFile,
      WORKER_IN_PROCESS: 'true',
      MIRROR_PUSH: 'true',
      MIRROR_POLL_INTERVAL: '3600',
      ...env,
    };
  });
  const { emulator, gw, url } = started;
  const { tenantId } = await gw.seedTenant('Mirror push');
  const boss = await startBoss({ databaseUrl: gw.db.url, role: 'producer' });
  const pool = gw.db.pool;
  return {
    emulator,
    gw,
    url,
    tenantId,
    boss,
    refreshToken: (email) =>
      emulator.admin.issueTokens({
        email,
        offline: true,
        clientId: CLIENT.clientId,
        scopes: [...GOOGLE_SCOPES],
      }).refresh_token as string,
    asAccount: (email, method, path, body) =>
      fetch(`${emulator.url}/calendar/v3${path}`, {
        method,
        headers: {
          authorization: `Bearer ${emulator.admin.issueTokens({ email, scopes: [...GOOGLE_SCOPES] }).access_token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    async calendarIdOf(externalId) {
      const id = await until(async () => {
        const { rows } = await pool.query<{ id: string }>('SELECT id FROM calendars WHERE external_id = $1', [
          externalId,
        ]);
        return rows[0]?.id;
      }, 5_000);
      if (id === undefined) {
        throw new Error(`No calendar ${externalId} was recorded.`);
      }
      return id;
    },
    async summaries(calendarId) {
      const { rows } = await pool.query<{ summary: string }>(
        'SELECT summary FROM mirror_events WHERE calendar_id = $1 ORDER BY summary',
        [calendarId],
      );
      return rows.map((row) => row.summary);
    },
    async syncReasons(calendarId) {
      const { rows } = await pool.query<{ reason: string }>(
        `SELECT data->>'reason' AS reason FROM pgboss.job WHERE name = $1 AND singleton_key = $2
         ORDER BY created_on`,
        [MIRROR_SYNC_QUEUE, calendarId],
      );
      return rows.map((row) => row.reason);
    },
    async planPass() {
      // The plan queue is stately: when a pass is already waiting, it runs after this point anyway.
      await boss.send(MIRROR_PLAN_QUEUE, {});
    },
    async count(table, calendarId) {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE calendar_id = $1`,
        [calendarId],
      );
      return rows[0]?.n ?? 0;
    },
    async close() {
      await boss.stop({ graceful: false });
      await gw.stop();
      await emulator.close();
    },
  };
}

/** Milliseconds from `since` until `check` holds (polled every 10 ms), or a timeout error. */
export async function msUntil(
  since: number,
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<number> {
  await until(check, timeoutMs, 10);
  return Date.now() - since;
}

export const meeting = (summary: string, day = 1) => ({
  summary,
  start: { dateTime: `2026-12-${String(day).padStart(2, '0')}T09:00:00Z` },
  end: { dateTime: `2026-12-${String(day).padStart(2, '0')}T10:00:00Z` },
});
