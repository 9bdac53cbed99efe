import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { occurrenceId, SchedulerRepository, SecretBox, type StoredSpec } from '../src/index.ts';
import { count, failure } from './support.ts';

// Tenant A has keys key_a1 and key_a2; tenant B has key_b.
const A = 'tnt_a';
const B = 'tnt_b';
const CRON: StoredSpec = { kind: 'cron', cron: '0 9 * * MON-FRI', timeZone: 'Europe/Berlin' };
const at = (iso: string) => new Date(iso);

let db: TestDatabase;
let repo: SchedulerRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new SchedulerRepository(db, new SecretBox([randomBytes(32)]));
  const p = db.prisma;
  for (const [tenant, keys] of [
    [A, ['key_a1', 'key_a2']],
    [B, ['key_b']],
  ] as const) {
    await p.tenant.create({ data: { id: tenant, name: tenant } });
    for (const id of keys) {
      await p.apiKey.create({
        data: { id, tenantId: tenant, name: id, prefix: `cg_live_${id}`, hash: randomBytes(32) },
      });
    }
  }
});

afterAll(async () => {
  await db.close();
});

describe('delivery targets', () => {
  it('creates a webhook target, shows its whsec_ secret once and seals it at rest', async () => {
    const { target, secret } = await repo.targets.create(A, {
      kind: 'webhook',
      name: 'Ops hook',
      url: 'https://hooks.example.com/in?token=abc',
    });
    expect(target).toMatchObject({
      tenantId: A,
      kind: 'webhook',
      name: 'Ops hook',
      url: 'https://hooks.example.com/in?token=abc',
      defaultAgentId: null,
      disabledAt: null,
      disabledReason: null,
    });
    expect(target.id).toMatch(/^tgt_/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from((secret ?? '').slice(6), 'base64')).toHaveLength(32);
    expect(JSON.stringify(target)).not.toContain(secret);

    const { rows } = await db.pool.query<{ sealed_secret: Buffer; secret_key_id: string }>(
      'SELECT sealed_secret, secret_key_id FROM delivery_targets WHERE id = $1',
      [target.id],
    );
    const sealed = rows[0]?.sealed_secret ?? Buffer.alloc(0);
    expect(sealed.length).toBeGreaterThan(29);
    expect(sealed.toString('utf8')).not.toContain(secret);
    expect(sealed.toString('latin1')).not.toContain((secret ?? '').slice(6));
    expect(rows[0]?.secret_key_id).toMatch(/^k_/);

    const opened = await repo.targets.openSecret(A, target.id);
    expect(opened.target).toEqual(target);
    expect(opened.secret.reveal()).toBe(secret);
    expect(String(opened.secret)).toBe('[secret]');
    expect(JSON.stringify(opened)).not.toContain(secret);
    expect(inspect(opened)).not.toContain(secret);
    await repo.targets.delete(A, target.id);
  });

  it('creates a Letta target with its API key sealed and no secret returned', async () => {
    const apiKey = 'sk-let-0123456789abcdef';
    const { target, secret } = await repo.targets.create(A, {
      kind: 'letta',
      name: 'Letta cloud',
      url: 'https://api.letta.example',
      apiKey,
      defaultAgentId: 'agent-123',
    });
    expect(secret).toBeNull();
    expect(target).toMatchObject({ kind: 'letta', defaultAgentId: 'agent-123' });
    const { rows } = await db.pool.query<{ sealed_secret: Buffer }>(
      'SELECT sealed_secret FROM delivery_targets WHERE id = $1',
      [target.id],
    );
    expect(rows[0]?.sealed_secret.toString('latin1')).not.toContain(apiKey);
    expect((await repo.targets.openSecret(A, target.id)).secret.reveal()).toBe(apiKey);
    await repo.targets.delete(A, target.id);
  });

  it('refuses bad input clearly, without repeating a secret or a URL, and stores nothing', async () => {
    const before = await count(db, 'delivery_targets', A);
    const apiKey = 'sk secret with spaces';
    const cases: [() => Promise<unknown>, RegExp][] = [
      [
        () => repo.targets.create(A, { kind: 'webhook', name: '', url: 'https://x.example' }),
        /name must not be empty/,
      ],
      [
        () => repo.targets.create(A, { kind: 'webhook', name: 'x'.repeat(101), url: 'https://x.example' }),
        /at most 100/,
      ],
      [() => repo.targets.create(A, { kind: 'webhook', name: 'n', url: 'not a url' }), /not an absolute URL/],
      [
        () => repo.targets.create(A, { kind: 'webhook', name: 'n', url: 'ftp://x.example/a' }),
        /http or https, not ftp/,
      ],
      [
        () => repo.targets.create(A, { kind: 'webhook', name: 'n', url: 'https://u:pw@x.example/' }),
        /must not contain a user name or password/,
      ],
      [
        () => repo.targets.create(A, { kind: 'letta', name: 'n', url: 'https://x.example', apiKey: ' ' }),
        /non-empty API key/,
      ],
      [
        () => repo.targets.create(A, { kind: 'letta', name: 'n', url: 'https://x.example', apiKey }),
        /without spaces or control characters/,
      ],
      [
        () => repo.targets.create(A, { kind: 'email' as 'webhook', name: 'n', url: 'https://x.example' }),
        /'webhook' or 'letta', got 'email'/,
      ],
    ];
    for (const [promise, message] of cases) {
      const error = await failure(promise());
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain('pw@');
      expect(error.message).not.toContain(apiKey);
    }
    expect(await count(db, 'delivery_targets', A)).toBe(before);
  });

  it('keeps names unique per tenant whatever their case, and lists by name without secrets', async () => {
    const first = await repo.targets.create(A, { kind: 'webhook', name: 'Beta', url: 'https://b.example' });
    const second = await repo.targets.create(A, { kind: 'webhook', name: 'alpha', url: 'https://a.example' });
    const taken = await failure(
      repo.targets.create(A, { kind: 'webhook', name: 'BETA', url: 'https://c.example' }),
    );
    expect(taken.code).toBe('already_exists');
    expect(taken.message).toContain("'BETA' already exists");
    // Another tenant may use the same name.
    const other = await repo.targets.create(B, { kind: 'webhook', name: 'beta', url: 'https://b.example' });

    const listed = await repo.targets.list(A);
    expect(listed.map((t) => t.name)).toEqual(['alpha', 'Beta']);
    for (const t of listed) {
      expect(Object.keys(t).sort()).toEqual(
        [
          'createdAt',
          'defaultAgentId',
          'disabledAt',
          'disabledReason',
          'id',
          'kind',
          'name',
          'tenantId',
          'url',
        ].sort(),
      );
    }
    expect(await repo.targets.get(A, first.target.id)).toEqual(first.target);
    expect(await repo.targets.get(A, 'tgt_missing')).toBeNull();
    for (const id of [first.target.id, second.target.id]) {
      await repo.targets.delete(A, id);
    }
    await repo.targets.delete(B, other.target.id);
    expect(await repo.targets.list(A)).toEqual([]);
  });

  it('disables (keeping the first reason), enables again, and refuses another tenant like a missing id', async () => {
    const { target } = await repo.targets.create(A, {
      kind: 'webhook',
      name: 'Gone',
      url: 'https://g.example',
    });
    const disabled = await repo.targets.disable(A, target.id, '410 Gone from the receiver');
    expect(disabled.disabledAt).toBeInstanceOf(Date);
    expect(disabled.disabledReason).toBe('410 Gone from the receiver');
    const again = await repo.targets.disable(A, target.id, 'second');
    expect(again).toEqual(disabled);
    expect(await repo.targets.enable(A, target.id)).toMatchObject({ disabledAt: null, disabledReason: null });

    for (const call of [
      () => repo.targets.openSecret(B, target.id),
      () => repo.targets.disable(B, target.id, 'x'),
      () => repo.targets.enable(B, target.id),
      () => repo.targets.delete(B, target.id),
      () => repo.targets.openSecret(A, 'tgt_nope'),
    ]) {
      const error = await failure(call());
      expect(error.code).toBe('not_found');
      expect(error.message).toMatch(/^No delivery target tgt_\w+ in this tenant\.$/);
    }
    expect(await repo.targets.get(B, target.id)).toBeNull();
    expect(await repo.targets.list(B)).toEqual([]);
    await repo.targets.delete(A, target.id);
    expect(await failure(repo.targets.delete(A, target.id))).toMatchObject({ code: 'not_found' });
  });

  it('a secret copied onto another target does not open', async () => {
    const one = await repo.targets.create(A, { kind: 'webhook', name: 'One', url: 'https://1.example' });
    const two = await repo.targets.create(A, { kind: 'webhook', name: 'Two', url: 'https://2.example' });
    await db.pool.query(
      `UPDATE delivery_targets SET sealed_secret = (SELECT sealed_secret FROM delivery_targets WHERE id = $1) WHERE id = $2`,
      [one.target.id, two.target.id],
    );
    const error = await failure(repo.targets.openSecret(A, two.target.id));
    expect(error.code).toBe('internal');
    expect(error.message).not.toContain(one.secret);
    await repo.targets.delete(A, one.target.id);
    await repo.targets.delete(A, two.target.id);
  });
});

describe('schedules', () => {
  it('creates, gets and lists a key’s own schedules only', async () => {
    const { target } = await repo.targets.create(A, {
      kind: 'webhook',
      name: 'Own',
      url: 'https://o.example',
    });
    const mine = await repo.schedules.create(A, {
      keyId: 'key_a1',
      targetId: target.id,
      agentId: 'agent-1',
      prompt: 'Review today’s calendar.\nThen plan.',
      spec: CRON,
      nextRunAt: at('2026-11-23T08:00:00Z'),
    });
    expect(mine).toMatchObject({
      tenantId: A,
      keyId: 'key_a1',
      targetId: target.id,
      agentId: 'agent-1',
      prompt: 'Review today’s calendar.\nThen plan.',
      spec: CRON,
      nextRunAt: at('2026-11-23T08:00:00Z'),
      repetitionsDone: 0,
      status: 'active',
      cancelledAt: null,
    });
    expect(mine.id).toMatch(/^sch_/);
    const theirs = await repo.schedules.create(A, {
      keyId: 'key_a2',
      prompt: 'Other key',
      spec: { kind: 'once', at: Date.parse('2026-12-01T00:00:00Z') },
      nextRunAt: at('2026-12-01T00:00:00Z'),
    });
    expect(theirs).toMatchObject({ targetId: null, agentId: null });

    expect((await repo.schedules.list(A, { keyId: 'key_a1' })).map((s) => s.id)).toEqual([mine.id]);
    expect((await repo.schedules.list(A, { keyId: 'key_a2' })).map((s) => s.id)).toEqual([theirs.id]);
    expect((await repo.schedules.list(A)).map((s) => s.id)).toEqual([mine.id, theirs.id]);
    expect(await repo.schedules.list(B)).toEqual([]);

    expect(await repo.schedules.get(A, mine.id, { keyId: 'key_a1' })).toEqual(mine);
    expect(await repo.schedules.get(A, mine.id)).toEqual(mine);
    expect(await repo.schedules.get(A, mine.id, { keyId: 'key_a2' })).toBeNull();
    expect(await repo.schedules.get(B, mine.id)).toBeNull();

    // Another key can neither cancel, pause nor resume it.
    for (const call of [
      () => repo.schedules.cancel(A, mine.id, { keyId: 'key_a2' }),
      () => repo.schedules.pause(A, mine.id, { keyId: 'key_a2' }),
      () => repo.schedules.resume(A, mine.id, { keyId: 'key_a2' }),
      () => repo.schedules.cancel(B, mine.id),
    ]) {
      const error = await failure(call());
      expect(error.code).toBe('not_found');
      expect(error.message).toBe(`No scheduled prompt ${mine.id} for this key.`);
    }
    expect((await repo.schedules.get(A, mine.id))?.status).toBe('active');
    await repo.schedules.cancel(A, mine.id);
    await repo.schedules.cancel(A, theirs.id);
    await repo.targets.delete(A, target.id);
  });

  it('refuses another tenant’s target or key like a missing one, a disabled target, and bad input', async () => {
    const { target: foreign } = await repo.targets.create(B, {
      kind: 'webhook',
      name: 'B',
      url: 'https://b.example',
    });
    const base = { keyId: 'key_a1', prompt: 'p', spec: CRON, nextRunAt: at('2026-11-23T08:00:00Z') };
    const before = await count(db, 'schedules', A);

    const refused = await failure(repo.schedules.create(A, { ...base, targetId: foreign.id }));
    const missing = await failure(repo.schedules.create(A, { ...base, targetId: 'tgt_nope' }));
    expect(refused.code).toBe('not_found');
    expect(refused.message).toBe(`No delivery target ${foreign.id} in this tenant.`);
    expect(missing.message).toBe('No delivery target tgt_nope in this tenant.');

    const key = await failure(repo.schedules.create(A, { ...base, keyId: 'key_b' }));
    expect(key).toMatchObject({ code: 'not_found', message: 'No API key key_b in this tenant.' });

    const { target } = await repo.targets.create(A, {
      kind: 'webhook',
      name: 'Off',
      url: 'https://off.example',
    });
    await repo.targets.disable(A, target.id, '410');
    expect(await failure(repo.schedules.create(A, { ...base, targetId: target.id }))).toMatchObject({
      code: 'precondition_failed',
    });

    const bad: [Partial<typeof base> & Record<string, unknown>, RegExp][] = [
      [{ prompt: '   ' }, /prompt must not be empty/],
      [{ prompt: 'x'.repeat(10_001) }, /10,001 characters long; at most 10,000/],
      [{ prompt: 'a\u0000b' }, /NUL/],
      [{ spec: [] as unknown as StoredSpec }, /must be a JSON object/],
      [{ spec: { at: 1 } as unknown as StoredSpec }, /string kind/],
      [{ nextRunAt: new Date(Number.NaN) }, /first run must be a valid instant/],
    ];
    for (const [change, message] of bad) {
      const error = await failure(repo.schedules.create(A, { ...base, ...change }));
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toMatch(message);
    }
    expect(await count(db, 'schedules', A)).toBe(before);
    await repo.targets.delete(A, target.id);
    await repo.targets.delete(B, foreign.id);
  });

  it('cancels once (a second cancel says so), hides cancelled unless asked, pauses and resumes', async () => {
    const s = await repo.schedules.create(A, {
      keyId: 'key_a1',
      prompt: 'Standup',
      spec: CRON,
      nextRunAt: at('2026-11-23T08:00:00Z'),
    });
    const paused = await repo.schedules.pause(A, s.id, { keyId: 'key_a1' });
    expect(paused).toMatchObject({ status: 'paused', nextRunAt: at('2026-11-23T08:00:00Z') });
    expect(await repo.schedules.pause(A, s.id)).toEqual(paused);
    expect(await repo.schedules.listDue(at('2030-01-01T00:00:00Z'))).not.toContainEqual(
      expect.objectContaining({ id: s.id }),
    );
    const resumed = await repo.schedules.resume(A, s.id, {
      keyId: 'key_a1',
      nextRunAt: at('2026-11-24T08:00:00Z'),
    });
    expect(resumed).toMatchObject({ status: 'active', nextRunAt: at('2026-11-24T08:00:00Z') });
    expect(await repo.schedules.resume(A, s.id, { nextRunAt: at('2027-01-01T00:00:00Z') })).toEqual(resumed);

    const first = await repo.schedules.cancel(A, s.id, { keyId: 'key_a1' });
    expect(first.alreadyCancelled).toBe(false);
    expect(first.schedule).toMatchObject({ status: 'cancelled', nextRunAt: null });
    expect(first.schedule.cancelledAt).toBeInstanceOf(Date);
    const second = await repo.schedules.cancel(A, s.id, { keyId: 'key_a1' });
    expect(second).toEqual({ schedule: first.schedule, alreadyCancelled: true });

    expect((await repo.schedules.list(A, { keyId: 'key_a1' })).map((x) => x.id)).not.toContain(s.id);
    expect(
      (await repo.schedules.list(A, { keyId: 'key_a1', includeCancelled: true })).map((x) => x.id),
    ).toContain(s.id);

    for (const call of [() => repo.schedules.pause(A, s.id), () => repo.schedules.resume(A, s.id)]) {
      const error = await failure(call());
      expect(error.code).toBe('precondition_failed');
      expect(error.message).toMatch(/is cancelled and cannot be (paused|resumed)/);
    }
    // A run recorded after the cancellation changes nothing.
    expect(
      await repo.schedules.setNextRun(A, s.id, { nextRunAt: at('2026-11-25T08:00:00Z'), repetitionsDone: 1 }),
    ).toEqual(first.schedule);
  });

  it('records runs with setNextRun, finishes on a null next run, and lists what is due', async () => {
    const s = await repo.schedules.create(A, {
      keyId: 'key_a2',
      prompt: 'Twice',
      spec: {
        kind: 'interval',
        everyMs: 60_000,
        startAt: Date.parse('2026-11-23T08:00:00Z'),
        maxRepetitions: 2,
      },
      nextRunAt: at('2026-11-23T08:00:00Z'),
    });
    const due = await repo.schedules.listDue(at('2026-11-23T08:00:00Z'));
    expect(due.map((x) => x.id)).toContain(s.id);
    expect((await repo.schedules.listDue(at('2026-11-23T07:59:59Z'))).map((x) => x.id)).not.toContain(s.id);

    const ran = await repo.schedules.setNextRun(A, s.id, {
      nextRunAt: at('2026-11-23T08:01:00Z'),
      repetitionsDone: 1,
    });
    expect(ran).toMatchObject({
      status: 'active',
      nextRunAt: at('2026-11-23T08:01:00Z'),
      repetitionsDone: 1,
    });
    const done = await repo.schedules.setNextRun(A, s.id, { nextRunAt: null, repetitionsDone: 2 });
    expect(done).toMatchObject({
      status: 'finished',
      nextRunAt: null,
      repetitionsDone: 2,
      cancelledAt: null,
    });
    expect((await repo.schedules.list(A, { keyId: 'key_a2' })).map((x) => x.id)).toContain(s.id);

    expect(await failure(repo.schedules.cancel(A, s.id))).toMatchObject({
      code: 'precondition_failed',
      message: `Scheduled prompt ${s.id} has already finished; there is nothing left to cancel.`,
    });
    expect(await failure(repo.schedules.setNextRun(B, s.id, { nextRunAt: null }))).toMatchObject({
      code: 'not_found',
    });
    expect(
      await failure(repo.schedules.setNextRun(A, s.id, { nextRunAt: null, repetitionsDone: -1 })),
    ).toMatchObject({
      code: 'invalid_argument',
    });
  });

  it('an event-relative schedule with no event planned stays active without a next run; others may not', async () => {
    const events: StoredSpec = { kind: 'around_events', query: 'title:standup', offsetMinutes: -10 };
    const s = await repo.schedules.create(A, {
      keyId: 'key_a1',
      prompt: 'Standup',
      spec: events,
      nextRunAt: null,
    });
    expect(s).toMatchObject({ status: 'active', nextRunAt: null });
    const planned = await repo.schedules.setNextRun(A, s.id, {
      nextRunAt: at('2026-11-23T08:50:00Z'),
      finished: false,
    });
    expect(planned).toMatchObject({ status: 'active', nextRunAt: at('2026-11-23T08:50:00Z') });
    const unplanned = await repo.schedules.setNextRun(A, s.id, { nextRunAt: null, finished: false });
    expect(unplanned).toMatchObject({ status: 'active', nextRunAt: null });
    // The database holds the rule too: only an event-relative schedule is active without a next run.
    await expect(
      repo.schedules.create(A, { keyId: 'key_a1', prompt: 'Cron', spec: CRON, nextRunAt: null }),
    ).rejects.toThrow(/schedules_next_run/);
    await repo.schedules.cancel(A, s.id);
  });

  it('a target cannot be deleted while live schedules use it; ended schedules keep their history', async () => {
    const { target } = await repo.targets.create(A, {
      kind: 'webhook',
      name: 'Busy',
      url: 'https://busy.example',
    });
    const s = await repo.schedules.create(A, {
      keyId: 'key_a1',
      targetId: target.id,
      prompt: 'p',
      spec: CRON,
      nextRunAt: at('2026-11-23T08:00:00Z'),
    });
    const error = await failure(repo.targets.delete(A, target.id));
    expect(error.code).toBe('precondition_failed');
    expect(error.message).toBe(
      "Delivery target 'Busy' cannot be deleted while a schedule delivers to it; cancel those schedules first.",
    );
    expect(error.context).toEqual({ scheduleIds: [s.id] });

    await repo.schedules.cancel(A, s.id);
    await repo.targets.delete(A, target.id);
    expect(await repo.schedules.get(A, s.id)).toMatchObject({ status: 'cancelled', targetId: null });
  });

  it('a schedule goes with the key that owns it', async () => {
    await db.prisma.apiKey.create({
      data: { id: 'key_tmp', tenantId: A, name: 'tmp', prefix: 'cg_live_tmp', hash: randomBytes(32) },
    });
    const s = await repo.schedules.create(A, {
      keyId: 'key_tmp',
      prompt: 'p',
      spec: CRON,
      nextRunAt: new Date(),
    });
    await repo.deliveries.record(A, {
      scheduleId: s.id,
      occurrenceAt: new Date(),
      attempt: 1,
      status: 'pending',
    });
    await db.prisma.apiKey.delete({ where: { id: 'key_tmp' } });
    expect(await repo.schedules.get(A, s.id)).toBeNull();
    expect(await repo.deliveries.listBySchedule(A, s.id)).toEqual([]);
  });
});

describe('deliveries', () => {
  it('records attempts idempotently by occurrence id and lists them by schedule', async () => {
    const s = await repo.schedules.create(A, {
      keyId: 'key_a1',
      prompt: 'p',
      spec: CRON,
      nextRunAt: at('2026-11-23T08:00:00Z'),
    });
    const when = at('2026-11-23T09:00:00Z');
    expect(occurrenceId(s.id, when)).toBe(`${s.id}:2026-11-23T09:00:00Z`);
    expect(occurrenceId(s.id, at('2026-11-23T09:00:00.250Z'))).toBe(`${s.id}:2026-11-23T09:00:00.250Z`);

    const pending = await repo.deliveries.record(A, {
      scheduleId: s.id,
      occurrenceAt: when,
      attempt: 1,
      status: 'pending',
    });
    expect(pending).toMatchObject({
      tenantId: A,
      scheduleId: s.id,
      occurrenceAt: when,
      occurrenceId: `${s.id}:2026-11-23T09:00:00Z`,
      attempt: 1,
      status: 'pending',
      statusCode: null,
      error: null,
      deliveredAt: null,
    });
    const retrying = await repo.deliveries.record(A, {
      scheduleId: s.id,
      occurrenceAt: when,
      attempt: 1,
      status: 'retrying',
      statusCode: 503,
      error: 'x'.repeat(3000),
    });
    expect(retrying).toMatchObject({ id: pending.id, status: 'retrying', statusCode: 503 });
    expect(retrying.error).toHaveLength(2000);
    // A replay of the same attempt leaves one row with the same result.
    const replay = await repo.deliveries.record(A, {
      scheduleId: s.id,
      occurrenceAt: when,
      attempt: 1,
      status: 'retrying',
      statusCode: 503,
      error: 'x'.repeat(3000),
    });
    expect(replay).toEqual(retrying);

    const delivered = await repo.deliveries.record(A, {
      scheduleId: s.id,
      occurrenceAt: when,
      attempt: 2,
      status: 'delivered',
      statusCode: 204,
    });
    expect(delivered).toMatchObject({
      id: pending.id,
      attempt: 2,
      status: 'delivered',
      statusCode: 204,
      error: null,
    });
    expect(delivered.deliveredAt).toBeInstanceOf(Date);
    // A late, older attempt and even a later failure do not undo a delivery.
    for (const attempt of [1, 3]) {
      expect(
        await repo.deliveries.record(A, {
          scheduleId: s.id,
          occurrenceAt: when,
          attempt,
          status: 'failed',
          statusCode: 500,
        }),
      ).toEqual(delivered);
    }
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM deliveries WHERE occurrence_id = $1',
      [delivered.occurrenceId],
    );
    expect(rows[0]?.n).toBe(1);
    expect(await repo.deliveries.get(A, delivered.occurrenceId)).toEqual(delivered);
    expect(await repo.deliveries.get(B, delivered.occurrenceId)).toBeNull();

    const later = at('2026-11-24T09:00:00Z');
    const missed = await repo.deliveries.record(A, {
      scheduleId: s.id,
      occurrenceAt: later,
      attempt: 1,
      status: 'missed',
    });
    expect((await repo.deliveries.listBySchedule(A, s.id)).map((d) => d.occurrenceId)).toEqual([
      missed.occurrenceId,
      delivered.occurrenceId,
    ]);
    expect(await repo.deliveries.listBySchedule(A, s.id, { limit: 1 })).toEqual([missed]);
    expect(await repo.deliveries.listBySchedule(B, s.id)).toEqual([]);
  });

  it('refuses another tenant’s schedule like a missing one and bad attempts', async () => {
    const s = await repo.schedules.create(A, {
      keyId: 'key_a1',
      prompt: 'p',
      spec: CRON,
      nextRunAt: new Date(),
    });
    const when = at('2026-11-23T10:00:00Z');
    for (const scheduleId of [s.id, 'sch_nope']) {
      const error = await failure(
        repo.deliveries.record(B, { scheduleId, occurrenceAt: when, attempt: 1, status: 'pending' }),
      );
      expect(error).toMatchObject({
        code: 'not_found',
        message: `No scheduled prompt ${scheduleId} for this key.`,
      });
    }
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ attempt: 0 }, /Attempt must be a whole number/],
      [{ status: 'lost' }, /Delivery status must be one of/],
      [{ statusCode: 42 }, /HTTP status 100–599/],
      [{ occurrenceAt: new Date(Number.NaN) }, /valid instant/],
    ];
    for (const [change, message] of bad) {
      const error = await failure(
        repo.deliveries.record(A, {
          scheduleId: s.id,
          occurrenceAt: when,
          attempt: 1,
          status: 'pending',
          ...change,
        }),
      );
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toMatch(message);
    }
    expect(await repo.deliveries.listBySchedule(A, s.id)).toEqual([]);
  });

  it('the database keeps occurrence ids unique', async () => {
    const s = await repo.schedules.create(A, {
      keyId: 'key_a1',
      prompt: 'p',
      spec: CRON,
      nextRunAt: new Date(),
    });
    const insert = () =>
      db.pool.query(
        `INSERT INTO deliveries (tenant_id, schedule_id, occurrence_at, occurrence_id, status)
         VALUES ($1, $2, now(), $3, 'pending')`,
        [A, s.id, `${s.id}:dup`],
      );
    await insert();
    await expect(insert()).rejects.toMatchObject({
      code: '23505',
      constraint: 'deliveries_occurrence_id_key',
    });
  });
});

describe("occurrences blocked by a worker's URL policy", () => {
  it('are queued again once each as their next attempt; those older than the window fail with why', async () => {
    const s = await repo.schedules.create(A, {
      keyId: 'key_a1',
      prompt: 'p',
      spec: CRON,
      nextRunAt: at('2030-01-01T08:00:00Z'),
    });
    const reason = 'webhook target tgt_x refused: target URL address 127.0.0.1 is a loopback address';
    for (const [when, attempt] of [
      ['2026-11-20T09:00:00Z', 1],
      ['2026-11-23T09:00:00Z', 2],
    ] as const) {
      await repo.deliveries.record(A, {
        scheduleId: s.id,
        occurrenceAt: at(when),
        attempt,
        status: 'pending',
      });
      await repo.runs.settle(
        { tenantId: A, scheduleId: s.id, occurrenceAt: at(when), attempt },
        { status: 'blocked', error: reason },
      );
    }
    const fresh = occurrenceId(s.id, at('2026-11-23T09:00:00Z'));
    const old = occurrenceId(s.id, at('2026-11-20T09:00:00Z'));
    expect((await repo.deliveries.get(A, fresh))?.status).toBe('blocked');

    const queued: unknown[] = [];
    const outcome = await repo.runs.requeueBlocked(at('2026-11-22T00:00:00Z'), async (client, blocked) => {
      // The caller's statements run in the same transaction, on the connection given.
      await client.query('SELECT 1');
      queued.push(...blocked);
    });
    expect(outcome).toEqual({ queued: 1, failed: 1 });
    expect(queued).toEqual([
      {
        tenantId: A,
        scheduleId: s.id,
        occurrenceId: fresh,
        occurrenceAt: at('2026-11-23T09:00:00Z'),
        attempt: 3,
        event: null,
      },
    ]);
    expect(await repo.deliveries.get(A, fresh)).toMatchObject({ status: 'retrying', attempt: 3 });
    expect(await repo.deliveries.get(A, old)).toMatchObject({
      status: 'failed',
      error: `Blocked by the URL policy for longer than the retry window: ${reason}`,
    });
    // Nothing is left to queue: a second start queues nothing again.
    expect(await repo.runs.requeueBlocked(at('2026-11-22T00:00:00Z'), async () => {})).toEqual({
      queued: 0,
      failed: 0,
    });
    await repo.schedules.cancel(A, s.id);
  });
});

describe('reads for lists and planning', () => {
  it('gives the latest deliveries of several schedules in one query, only the tenant’s', async () => {
    const make = () =>
      repo.schedules.create(A, {
        keyId: 'key_a1',
        prompt: 'p',
        spec: CRON,
        nextRunAt: at('2026-12-01T08:00:00Z'),
      });
    const [one, two, none] = [await make(), await make(), await make()];
    for (const [schedule, hours] of [
      [one, ['09', '10', '11']],
      [two, ['12']],
    ] as const) {
      for (const hour of hours) {
        await repo.deliveries.record(A, {
          scheduleId: schedule.id,
          occurrenceAt: at(`2026-12-01T${hour}:00:00Z`),
          attempt: 1,
          status: 'delivered',
        });
      }
    }
    const recent = await repo.deliveries.recentBySchedules(A, [one.id, two.id, none.id], 2);
    expect(recent.get(one.id)?.map((d) => d.occurrenceAt.toISOString())).toEqual([
      '2026-12-01T11:00:00.000Z',
      '2026-12-01T10:00:00.000Z',
    ]);
    expect(recent.get(two.id)).toHaveLength(1);
    expect(recent.has(none.id)).toBe(false);
    expect((await repo.deliveries.recentBySchedules(B, [one.id], 2)).size).toBe(0);
    expect((await repo.deliveries.recentBySchedules(A, [], 2)).size).toBe(0);
  });

  it('lists active schedules of one kind across tenants', async () => {
    const around = { kind: 'around_events', query: 'title:Acme', offsetMinutes: -10 } as const;
    const a = await repo.schedules.create(A, {
      keyId: 'key_a1',
      prompt: 'p',
      spec: around,
      nextRunAt: at('2026-12-01T08:00:00Z'),
    });
    const b = await repo.schedules.create(B, {
      keyId: 'key_b',
      prompt: 'p',
      spec: around,
      nextRunAt: at('2026-12-01T08:00:00Z'),
    });
    const cancelled = await repo.schedules.create(A, {
      keyId: 'key_a1',
      prompt: 'p',
      spec: around,
      nextRunAt: at('2026-12-01T08:00:00Z'),
    });
    await repo.schedules.cancel(A, cancelled.id);
    const ids = (await repo.schedules.listActiveOfKind('around_events')).map((s) => s.id);
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(ids).not.toContain(cancelled.id);
    expect((await repo.schedules.listActiveOfKind('cron')).every((s) => s.spec.kind === 'cron')).toBe(true);
  });
});

describe('the tenant delivery log', () => {
  it('lists the tenant’s deliveries across schedules, newest first, by status and page', async () => {
    for (const [id, tenant] of [
      ['key_log', 'tnt_log'],
      ['key_log_other', 'tnt_log_other'],
    ] as const) {
      await db.prisma.tenant.create({ data: { id: tenant, name: tenant } });
      await db.prisma.apiKey.create({
        data: { id, tenantId: tenant, name: id, prefix: `cg_live_${id}`, hash: randomBytes(32) },
      });
    }
    const first = await repo.schedules.create('tnt_log', {
      keyId: 'key_log',
      prompt: 'p',
      spec: CRON,
      nextRunAt: new Date(),
    });
    const second = await repo.schedules.create('tnt_log', {
      keyId: 'key_log',
      prompt: 'q',
      spec: CRON,
      nextRunAt: new Date(),
    });
    const foreign = await repo.schedules.create('tnt_log_other', {
      keyId: 'key_log_other',
      prompt: 'r',
      spec: CRON,
      nextRunAt: new Date(),
    });
    const statuses = ['delivered', 'failed', 'delivered', 'missed', 'delivered'] as const;
    const recorded = [];
    for (const [i, status] of statuses.entries()) {
      recorded.push(
        await repo.deliveries.record('tnt_log', {
          scheduleId: i % 2 === 0 ? first.id : second.id,
          occurrenceAt: new Date(Date.UTC(2026, 10, 23, 9, i)),
          attempt: 1,
          status,
          ...(status === 'failed' ? { statusCode: 500, error: 'boom' } : {}),
        }),
      );
    }
    await repo.deliveries.record('tnt_log_other', {
      scheduleId: foreign.id,
      occurrenceAt: new Date(Date.UTC(2026, 10, 23, 10)),
      attempt: 1,
      status: 'delivered',
    });
    // Two rows recorded in the same millisecond still page apart, by id.
    await db.pool.query(
      "UPDATE deliveries SET created_at = '2026-11-23T08:00:00Z' WHERE tenant_id = 'tnt_log'",
    );
    const newestFirst = [...recorded].reverse().map((d) => d.occurrenceId);

    const all = await repo.deliveries.listByTenant('tnt_log');
    expect(all.map((d) => d.occurrenceId)).toEqual(newestFirst);
    expect(all.every((d) => d.tenantId === 'tnt_log')).toBe(true);

    const pages: string[][] = [];
    let before: { createdAt: Date; id: string } | undefined;
    for (;;) {
      const page = await repo.deliveries.listByTenant('tnt_log', { limit: 2, ...(before ? { before } : {}) });
      if (page.length === 0) {
        break;
      }
      pages.push(page.map((d) => d.occurrenceId));
      const last = page.at(-1);
      before = last === undefined ? undefined : { createdAt: last.createdAt, id: last.id };
    }
    expect(pages).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);

    const delivered = await repo.deliveries.listByTenant('tnt_log', { status: 'delivered' });
    expect(delivered.map((d) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
    const failed = await repo.deliveries.listByTenant('tnt_log', { status: 'failed' });
    expect(failed).toMatchObject([{ statusCode: 500, error: 'boom', scheduleId: second.id }]);
    expect(await repo.deliveries.listByTenant('tnt_log', { status: 'retrying' })).toEqual([]);
    expect((await repo.deliveries.listByTenant('tnt_log_other')).map((d) => d.scheduleId)).toEqual([
      foreign.id,
    ]);
    expect(await repo.deliveries.listByTenant('tnt_nobody')).toEqual([]);

    const bad = await failure(repo.deliveries.listByTenant('tnt_log', { status: 'lost' as never }));
    expect(bad).toMatchObject({ code: 'invalid_argument' });
    const badCursor = await failure(
      repo.deliveries.listByTenant('tnt_log', { before: { createdAt: new Date(), id: "1' OR 1=1" } }),
    );
    expect(badCursor.message).toMatch(/page cursor/);
  });
});
