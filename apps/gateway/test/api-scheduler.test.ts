import { randomBytes } from 'node:crypto';
import { createSchedule, type ScheduleRequest, type Scheduling } from '@calgate/scheduler';
import type { ScheduleRecord } from '@calgate/store';
import { type Receiver, startReceiver, until } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, ORIGIN, sessionFor } from './api-client.ts';
import { HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';

/** A public address as a literal: accepted without TARGETS_ALLOW_PRIVATE, and never connected to here. */
const PUBLIC_HOOK = 'https://93.184.215.14:8443/hooks/acme?token=url-token-s3cret';
const LETTA_KEY = 'sk-let-api-key-never-shown';

describe('/api/v1 delivery targets, schedules and the delivery log', () => {
  /** TARGETS_ALLOW_PRIVATE off, as in production. */
  let gw: TestGateway;
  /** The same database with TARGETS_ALLOW_PRIVATE=true, to test a local receiver. */
  let lan: TestGateway;
  let scheduling: Scheduling;
  let receiver: Receiver;
  let ann: Browser;
  let eve: Browser;
  let annTenant: { tenantId: string; keyId: string };
  let secondKey: string;
  let hook = '';
  let hookSecret = '';
  let local = '';
  let localSecret = '';
  let letta = '';
  /** Every answer a test saw: no secret may appear in any but the webhook's creation. */
  const bodies: string[] = [];

  async function as(who: Browser, method: string, path: string, body?: unknown) {
    const answer = await call(who === ann && path.endsWith('/test') ? lan : gw, method, path, {
      as: who,
      ...(body === undefined ? {} : { body }),
    });
    bodies.push(JSON.stringify(answer.body));
    return answer;
  }

  async function schedule(request: ScheduleRequest, keyId = annTenant.keyId, prompt = 'Plan the day.') {
    const made = createSchedule(request, Date.now());
    if (!made.ok) {
      throw made.error;
    }
    return scheduling.create(annTenant.tenantId, {
      keyId,
      targetId: hook,
      prompt,
      spec: made.value.schedule.spec as unknown as ScheduleRecord['spec'],
      nextRunAt: new Date(made.value.firstRun),
    });
  }

  beforeAll(async () => {
    const encryption = { ENCRYPTION_KEY: randomBytes(32).toString('base64') };
    gw = await startTestGateway({ ...HIGH_RATE_LIMITS, ...encryption });
    lan = await startTestGateway(
      { ...HIGH_RATE_LIMITS, ...encryption, TARGETS_ALLOW_PRIVATE: 'true' },
      { db: gw.db },
    );
    scheduling = gw.runtime.deps.dashboard.scheduling;
    annTenant = await gw.seedTenant('Acme');
    secondKey = (await gw.runtime.keys.create(annTenant.tenantId, { name: 'nightly' })).key.id;
    const other = await gw.seedTenant('Globex');
    ann = await sessionFor(gw, annTenant.tenantId);
    eve = await sessionFor(gw, other.tenantId);
    receiver = await startReceiver(() => localSecret);
  });

  afterAll(async () => {
    await receiver?.close();
    await lan?.stop();
    await gw?.stop();
  });

  describe('.happy', () => {
    it('creates a webhook target: the whsec_ secret once, then only name, kind and origin', async () => {
      const created = await as(ann, 'POST', '/api/v1/targets', {
        kind: 'webhook',
        name: 'Acme hook',
        url: PUBLIC_HOOK,
      });
      expect(created.status).toBe(201);
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      expect(created.body.secretHint).toMatch(/only this once/);
      expect(created.body.target).toEqual({
        id: expect.stringMatching(/^tgt_/),
        kind: 'webhook',
        name: 'Acme hook',
        origin: 'https://93.184.215.14:8443',
        defaultAgentId: null,
        disabled: false,
        disabledAt: null,
        disabledReason: null,
        createdAt: expect.any(String),
        liveSchedules: 0,
      });
      hook = created.body.target.id;
      hookSecret = created.body.secret;
      bodies.pop();

      const lettaAnswer = await as(ann, 'POST', '/api/v1/targets', {
        kind: 'letta',
        name: 'Letta',
        url: 'https://93.184.215.14/letta/',
        apiKey: LETTA_KEY,
        defaultAgentId: 'agent-123',
      });
      expect(lettaAnswer.status).toBe(201);
      expect(lettaAnswer.body).not.toHaveProperty('secret');
      expect(lettaAnswer.body.target).toMatchObject({
        kind: 'letta',
        origin: 'https://93.184.215.14',
        defaultAgentId: 'agent-123',
      });
      letta = lettaAnswer.body.target.id;

      const list = await as(ann, 'GET', '/api/v1/targets');
      expect(list.status).toBe(200);
      expect(list.body.allowPrivateTargets).toBe(false);
      expect(list.body.targets.map((t: { name: string }) => t.name)).toEqual(['Acme hook', 'Letta']);
    });

    it('sends a signed test to a local receiver where TARGETS_ALLOW_PRIVATE is on, and reports a failure', async () => {
      const created = await call(lan, 'POST', '/api/v1/targets', {
        as: ann,
        body: { kind: 'webhook', name: 'Local', url: receiver.url },
      });
      expect(created.status).toBe(201);
      local = created.body.target.id;
      localSecret = created.body.secret;
      expect(created.body.target.origin).toBe(new URL(receiver.url).origin);

      const tested = await as(ann, 'POST', `/api/v1/targets/${local}/test`);
      expect(tested.status).toBe(200);
      expect(tested.body.test).toMatchObject({ targetId: local, ok: true, status: 200, error: null });
      await until(() => receiver.received.length === 1);
      expect(receiver.received[0]).toMatchObject({
        id: expect.stringMatching(/^test_/),
        verified: true,
        body: { type: 'target.test', targetId: local },
      });

      receiver.answer = 500;
      const failed = await as(ann, 'POST', `/api/v1/targets/${local}/test`);
      expect(failed.body.test).toMatchObject({ ok: false, status: 500 });
      expect(failed.body.test.error).toMatch(/500/);
      receiver.answer = 200;

      // Without TARGETS_ALLOW_PRIVATE the same target is refused when sent to, as a delivery would be.
      const refused = await call(gw, 'POST', `/api/v1/targets/${local}/test`, { as: ann });
      expect(refused.body.test).toMatchObject({ ok: false, status: null });
      expect(refused.body.test.error).toMatch(
        /refused: target URL address 127\.0\.0\.1 is a loopback address; Calgate refuses private targets unless TARGETS_ALLOW_PRIVATE=true \(or OUTBOUND_ALLOW_PRIVATE=true\)/,
      );
      expect(receiver.received).toHaveLength(1);
    });

    it('disables and enables a target', async () => {
      const disabled = await as(ann, 'POST', `/api/v1/targets/${letta}/disable`, {
        reason: 'Rotating the key',
      });
      expect(disabled.body.target).toMatchObject({ disabled: true, disabledReason: 'Rotating the key' });
      expect(disabled.body.target.disabledAt).toEqual(expect.any(String));
      const enabled = await as(ann, 'POST', `/api/v1/targets/${letta}/enable`);
      expect(enabled.body.target).toMatchObject({ disabled: false, disabledReason: null, disabledAt: null });
    });

    it('lists every key’s schedules newest first, with owner, target and recent deliveries', async () => {
      const daily = await schedule({ kind: 'cron', cron: '0 9 * * *', timeZone: 'Europe/Berlin' });
      const nightly = await schedule(
        { kind: 'interval', every: '6h' },
        secondKey,
        `Summarise the night. ${'x'.repeat(300)}`,
      );
      await gw.runtime.scheduler.deliveries.record(annTenant.tenantId, {
        scheduleId: daily.id,
        occurrenceAt: new Date('2026-01-05T08:00:00Z'),
        attempt: 3,
        status: 'failed',
        statusCode: 503,
        error: 'target answered 503',
      });
      const list = await as(ann, 'GET', '/api/v1/schedules');
      expect(list.status).toBe(200);
      expect(list.body.schedules.map((s: { scheduleId: string }) => s.scheduleId)).toEqual([
        nightly.id,
        daily.id,
      ]);
      const [second, first] = list.body.schedules;
      expect(first).toMatchObject({
        kind: 'cron',
        description: 'cron 0 9 * * * in Europe/Berlin',
        prompt: 'Plan the day.',
        status: 'active',
        timeZone: 'Europe/Berlin',
        keyId: annTenant.keyId,
        keyName: 'agent',
        target: { id: hook, name: 'Acme hook', origin: 'https://93.184.215.14:8443' },
        lastDelivery: { status: 'failed', attempt: 3, statusCode: 503 },
        recentDeliveries: [
          {
            occurrenceId: `${daily.id}:2026-01-05T08:00:00Z`,
            status: 'failed',
            attempt: 3,
            statusCode: 503,
            error: 'target answered 503',
          },
        ],
      });
      expect(new Date(first.nextRun).getTime()).toBe(daily.nextRunAt?.getTime());
      expect(second).toMatchObject({
        keyId: secondKey,
        keyName: 'nightly',
        kind: 'interval',
        recentDeliveries: [],
      });
      expect(second.prompt).toHaveLength(321);
      expect(list.body.scheduler).toMatchObject({
        workers: [],
        last24h: { failed: 1, delivered: 0, missed: 0, retrying: 0, blocked: 0 },
      });
      expect(list.body.scheduler).not.toHaveProperty('recentFailures');
      const targets = await as(ann, 'GET', '/api/v1/targets');
      expect(targets.body.targets.find((t: { id: string }) => t.id === hook).liveSchedules).toBe(2);
    });

    it('pauses, resumes and cancels a schedule through the engine', async () => {
      const created = await schedule({ kind: 'cron', cron: '30 7 * * MON', timeZone: 'Europe/Berlin' });
      const paused = await as(ann, 'POST', `/api/v1/schedules/${created.id}/pause`);
      expect(paused.status).toBe(200);
      expect(paused.body.schedule).toMatchObject({ scheduleId: created.id, status: 'paused', nextRun: null });
      const resumed = await as(ann, 'POST', `/api/v1/schedules/${created.id}/resume`);
      expect(resumed.body.schedule).toMatchObject({ status: 'active', nextRun: expect.any(String) });
      // Resuming queues the next run again.
      const { rows } = await gw.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'calgate-prompt-due' AND data->>'scheduleId' = $1`,
        [created.id],
      );
      expect(rows[0]?.n).toBeGreaterThanOrEqual(1);

      const cancelled = await as(ann, 'POST', `/api/v1/schedules/${created.id}/cancel`);
      expect(cancelled.body).toMatchObject({
        alreadyCancelled: false,
        schedule: { status: 'cancelled', nextRun: null },
      });
      const again = await as(ann, 'POST', `/api/v1/schedules/${created.id}/cancel`);
      expect(again.body.alreadyCancelled).toBe(true);
      const resume = await as(ann, 'POST', `/api/v1/schedules/${created.id}/resume`);
      expect(resume.status).toBe(412);
      expect(resume.body.error.message).toBe(
        `Scheduled prompt ${created.id} is cancelled and cannot be resumed.`,
      );

      const live = await as(ann, 'GET', '/api/v1/schedules');
      expect(live.body.schedules.some((s: { scheduleId: string }) => s.scheduleId === created.id)).toBe(
        false,
      );
      const all = await as(ann, 'GET', '/api/v1/schedules?includeCancelled=true');
      expect(all.body.schedules.find((s: { scheduleId: string }) => s.scheduleId === created.id).status).toBe(
        'cancelled',
      );
    });

    it('refuses to delete a target live schedules use, with the store’s message; then deletes it', async () => {
      const refused = await as(ann, 'DELETE', `/api/v1/targets/${hook}`);
      expect(refused.status).toBe(412);
      expect(refused.body.error.message).toBe(
        "Delivery target 'Acme hook' cannot be deleted while 2 schedules deliver to it; cancel those schedules first.",
      );
      const deleted = await as(ann, 'DELETE', `/api/v1/targets/${letta}`);
      expect(deleted).toMatchObject({ status: 200, body: { deleted: letta } });
      const gone = await as(ann, 'DELETE', `/api/v1/targets/${letta}`);
      expect(gone.status).toBe(404);
    });

    it('pages the delivery log newest first, filters by status, and retries or replays a settled delivery', async () => {
      const log = await schedule({ kind: 'interval', every: '1h' });
      const record = (minute: number, status: 'delivered' | 'failed' | 'missed' | 'pending') =>
        gw.runtime.scheduler.deliveries.record(annTenant.tenantId, {
          scheduleId: log.id,
          occurrenceAt: new Date(Date.UTC(2026, 0, 6, 9, minute)),
          attempt: 1,
          status,
          ...(status === 'failed' ? { statusCode: 500, error: 'target answered 500' } : {}),
        });
      const made = [];
      for (const [minute, status] of [
        [0, 'delivered'],
        [1, 'failed'],
        [2, 'missed'],
        [3, 'pending'],
      ] as const) {
        made.push(await record(minute, status));
      }
      const newest = [...made].reverse().map((d) => d.occurrenceId);

      const first = await as(ann, 'GET', '/api/v1/deliveries?limit=2');
      expect(first.status).toBe(200);
      expect(first.body.deliveries.map((d: { occurrenceId: string }) => d.occurrenceId)).toEqual(
        newest.slice(0, 2),
      );
      expect(first.body.deliveries[0]).toMatchObject({
        scheduleId: log.id,
        status: 'pending',
        schedule: { id: log.id, description: expect.stringMatching(/^every 1 ?h/), status: 'active' },
      });
      expect(first.body.deliveries[0]).not.toHaveProperty('id');
      expect(first.body.deliveries[0]).not.toHaveProperty('tenantId');
      const second = await as(ann, 'GET', `/api/v1/deliveries?limit=2&before=${first.body.nextCursor}`);
      expect(second.body.deliveries.map((d: { occurrenceId: string }) => d.occurrenceId)).toEqual(
        newest.slice(2, 4),
      );
      const failed = await as(ann, 'GET', '/api/v1/deliveries?status=failed');
      expect(failed.body.deliveries.map((d: { occurrenceId: string }) => d.occurrenceId)).toContain(
        made[1]?.occurrenceId,
      );
      expect(failed.body.deliveries.every((d: { status: string }) => d.status === 'failed')).toBe(true);
      expect(failed.body.nextCursor).toBeNull();

      const failedId = made[1]?.occurrenceId ?? '';
      const retried = await as(ann, 'POST', `/api/v1/deliveries/${encodeURIComponent(failedId)}/replay`);
      expect(retried.status).toBe(202);
      expect(retried.body).toMatchObject({
        replayed: failedId,
        delivery: { status: 'retrying', statusCode: null, error: null },
      });
      const { rows } = await gw.db.pool.query<{ attempt: number }>(
        `SELECT (data->>'attempt')::int AS attempt FROM pgboss.job
          WHERE name = 'calgate-prompt-due' AND data->>'scheduleId' = $1 AND data->>'replay' = 'true'`,
        [log.id],
      );
      expect(rows).toEqual([{ attempt: 2 }]);
      const deliveredId = made[0]?.occurrenceId ?? '';
      const replayed = await as(ann, 'POST', `/api/v1/deliveries/${encodeURIComponent(deliveredId)}/replay`);
      expect(replayed.status).toBe(202);
      expect(replayed.body.delivery.status).toBe('delivered');

      for (const busy of [made[3]?.occurrenceId ?? '', failedId]) {
        const refused = await as(ann, 'POST', `/api/v1/deliveries/${encodeURIComponent(busy)}/replay`);
        expect(refused.status).toBe(412);
        expect(refused.body.error.message).toMatch(
          /is still being attempted \((pending|retrying), attempt \d\)/,
        );
      }
    });
  });

  describe('.error', () => {
    it('names what is wrong in a new target', async () => {
      const cases: [unknown, RegExp][] = [
        [{ name: 'x', url: PUBLIC_HOOK }, /kind must be 'webhook' or 'letta'/],
        [{ kind: 'sms', name: 'x', url: PUBLIC_HOOK }, /kind must be 'webhook' or 'letta'/],
        [{ kind: 'webhook', name: '', url: PUBLIC_HOOK }, /name: give the target a name/],
        [{ kind: 'webhook', name: 'x' }, /url:/],
        [{ kind: 'letta', name: 'x', url: 'https://93.184.215.14' }, /apiKey:/],
        [{ kind: 'webhook', name: 'x', url: PUBLIC_HOOK, apiKey: 'k' }, /apiKey/],
        [{ kind: 'webhook', name: 'x', url: 'ftp://93.184.215.14/x' }, /must use https, not ftp/],
        [
          { kind: 'webhook', name: 'x', url: 'http://93.184.215.14/x' },
          /Cannot add this target: target URL must use https/,
        ],
        [{ kind: 'webhook', name: 'x', url: 'not a url' }, /not a valid absolute URL/],
      ];
      for (const [body, message] of cases) {
        const answer = await as(ann, 'POST', '/api/v1/targets', body);
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expect(answer.body.error.message).toMatch(message);
      }
      const duplicate = await as(ann, 'POST', '/api/v1/targets', {
        kind: 'webhook',
        name: 'ACME HOOK',
        url: PUBLIC_HOOK,
      });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.error.message).toMatch(/already exists/);
    });

    it('refuses a bad status filter or cursor', async () => {
      const status = await as(ann, 'GET', '/api/v1/deliveries?status=lost');
      expect(status.status).toBe(400);
      expect(status.body.error.message).toMatch(
        /status must be one of pending, delivered, failed, missed, retrying/,
      );
      const cursor = await as(ann, 'GET', '/api/v1/deliveries?before=yesterday');
      expect(cursor.status).toBe(400);
      expect(cursor.body.error.message).toMatch(/nextCursor of the previous page/);
    });
  });

  describe('.security', () => {
    it('refuses loopback, private and metadata URLs without TARGETS_ALLOW_PRIVATE, storing nothing', async () => {
      const before = (await as(ann, 'GET', '/api/v1/targets')).body.targets.length;
      for (const [url, message] of [
        [
          receiver.url,
          /^Cannot add this target: target URL address 127\.0\.0\.1 is a loopback address; Calgate refuses private targets unless TARGETS_ALLOW_PRIVATE=true \(or OUTBOUND_ALLOW_PRIVATE=true\)\.$/,
        ],
        [
          'http://localhost:9/hook',
          /resolves to .* loopback address; Calgate refuses private targets unless/,
        ],
        [
          'https://10.1.2.3/hook',
          /10\.1\.2\.3 is a private address; Calgate refuses private targets unless TARGETS_ALLOW_PRIVATE=true \(or OUTBOUND_ALLOW_PRIVATE=true\)/,
        ],
        ['https://[::1]/hook', /::1 is a loopback address/],
        ['https://169.254.169.254/latest/meta-data', /cloud metadata address/],
      ] as const) {
        const answer = await as(ann, 'POST', '/api/v1/targets', {
          kind: 'webhook',
          name: `n-${randomBytes(3).toString('hex')}`,
          url,
        });
        expect(answer.status, url).toBe(403);
        expect(answer.body.error.code).toBe('permission_denied');
        expect(answer.body.error.message).toMatch(message);
      }
      // Even where private networks are allowed, cloud metadata addresses stay refused.
      const metadata = await call(lan, 'POST', '/api/v1/targets', {
        as: ann,
        body: { kind: 'letta', name: 'meta', url: 'http://169.254.169.254/', apiKey: 'k' },
      });
      expect(metadata.status).toBe(403);
      expect((await as(ann, 'GET', '/api/v1/targets')).body.targets).toHaveLength(before);
    });

    it('answers another tenant’s target, schedule and delivery ids exactly like missing ones', async () => {
      const [annSchedule] = (await as(ann, 'GET', '/api/v1/schedules')).body.schedules;
      const occurrence =
        annSchedule.recentDeliveries[0]?.occurrenceId ?? `${annSchedule.scheduleId}:2026-01-05T08:00:00Z`;
      const pairs: [string, string, string, string][] = [
        ['POST', `/api/v1/targets/${hook}/test`, '/api/v1/targets/tgt_missing/test', 'delivery target'],
        ['POST', `/api/v1/targets/${hook}/enable`, '/api/v1/targets/tgt_missing/enable', 'delivery target'],
        ['POST', `/api/v1/targets/${hook}/disable`, '/api/v1/targets/tgt_missing/disable', 'delivery target'],
        ['DELETE', `/api/v1/targets/${hook}`, '/api/v1/targets/tgt_missing', 'delivery target'],
        [
          'POST',
          `/api/v1/schedules/${annSchedule.scheduleId}/cancel`,
          '/api/v1/schedules/sch_missing/cancel',
          'scheduled prompt',
        ],
        [
          'POST',
          `/api/v1/schedules/${annSchedule.scheduleId}/pause`,
          '/api/v1/schedules/sch_missing/pause',
          'scheduled prompt',
        ],
        [
          'POST',
          `/api/v1/schedules/${annSchedule.scheduleId}/resume`,
          '/api/v1/schedules/sch_missing/resume',
          'scheduled prompt',
        ],
        [
          'POST',
          `/api/v1/deliveries/${encodeURIComponent(occurrence)}/replay`,
          `/api/v1/deliveries/${encodeURIComponent('sch_missing:2026-01-05T08:00:00Z')}/replay`,
          'delivery',
        ],
      ];
      for (const [method, foreign, missing, noun] of pairs) {
        const theirs = await as(eve, method, foreign);
        const none = await as(eve, method, missing);
        expect(theirs.status, foreign).toBe(404);
        expect(none.status, missing).toBe(404);
        const shape = (text: string) => text.replace(/\b(tgt|sch)_[\w:.-]+/g, 'ID');
        expect(shape(theirs.body.error.message)).toBe(shape(none.body.error.message));
        expect(theirs.body.error.message.toLowerCase()).toContain(`no ${noun}`);
        expect(theirs.body.error.message).toMatch(/in this tenant\.$/);
      }
      // Nothing of Acme's changed, and Globex sees none of it.
      const after = await as(ann, 'GET', '/api/v1/schedules');
      expect(
        after.body.schedules.find((s: { scheduleId: string }) => s.scheduleId === annSchedule.scheduleId)
          .status,
      ).toBe('active');
      for (const path of [
        '/api/v1/targets',
        '/api/v1/schedules?includeCancelled=true',
        '/api/v1/deliveries',
      ]) {
        const theirs = await as(eve, 'GET', path);
        expect(theirs.status).toBe(200);
        expect(Object.values(theirs.body).find(Array.isArray)).toEqual([]);
      }
    });

    it('needs a session, and on writes the CSRF token and Calgate’s own origin', async () => {
      const anonymous = await call(gw, 'GET', '/api/v1/schedules');
      expect(anonymous.status).toBe(401);
      const forged: Record<string, string>[] = [
        { 'x-calgate-csrf': 'forged' },
        { origin: 'https://evil.example' },
      ];
      for (const headers of forged) {
        const answer = await call(gw, 'POST', '/api/v1/targets', {
          as: ann,
          body: { kind: 'webhook', name: 'Forged', url: PUBLIC_HOOK },
          headers,
        });
        expect(answer.status).toBe(403);
      }
      const noCsrf = await fetch(`${gw.url}/api/v1/targets/${hook}/test`, {
        method: 'POST',
        headers: { cookie: ann.cookie, origin: ORIGIN },
      });
      expect(noCsrf.status).toBe(403);
    });

    it('never shows a secret or a URL’s path or query after the webhook’s creation', () => {
      const seen = bodies.join('\n');
      expect(bodies.length).toBeGreaterThan(20);
      for (const secret of [
        hookSecret,
        localSecret,
        LETTA_KEY,
        'url-token-s3cret',
        '/hooks/acme',
        '/hook"',
        'whsec_',
      ]) {
        expect(secret.length).toBeGreaterThan(4);
        expect(seen).not.toContain(secret);
      }
    });
  });
});
