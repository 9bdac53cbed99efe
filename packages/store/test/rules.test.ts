import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClassificationRecord,
  PROJECT_COLOURS,
  RULE_QUERY_MAX,
  RulesRepository,
  type RuleVerdict,
} from '../src/index.ts';
import { count, failure } from './support.ts';

// Tenant A has calendars cal_a1, cal_a2, key key_a and user usr_a; tenant B has cal_b, key_b, usr_b.
const A = 'tnt_a';
const B = 'tnt_b';

let db: TestDatabase;
let repo: RulesRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new RulesRepository(db);
  const p = db.prisma;
  for (const [tenant, calendars, suffix] of [
    [A, ['cal_a1', 'cal_a2'], 'a'],
    [B, ['cal_b'], 'b'],
  ] as const) {
    await p.tenant.create({ data: { id: tenant, name: tenant } });
    await p.connection.create({
      data: { id: `con_${suffix}`, tenantId: tenant, provider: 'local', accountEmail: 'local', auth: 'none' },
    });
    for (const id of calendars) {
      await p.calendar.create({
        data: {
          id,
          tenantId: tenant,
          connectionId: `con_${suffix}`,
          externalId: id,
          summary: id,
          timeZone: 'UTC',
        },
      });
    }
    await p.apiKey.create({
      data: {
        id: `key_${suffix}`,
        tenantId: tenant,
        name: 'agent',
        prefix: `cg_live_${suffix}`,
        hash: new Uint8Array(32).fill(suffix.charCodeAt(0)),
      },
    });
    await p.user.create({ data: { id: `usr_${suffix}`, tenantId: tenant, email: `${suffix}@example.com` } });
  }
});

afterAll(async () => {
  await db.close();
});

const at = (iso: string) => new Date(iso);

function verdict(eventId: string, projectId: string | null, extra: Partial<RuleVerdict> = {}): RuleVerdict {
  return {
    calendarId: 'cal_a1',
    eventId,
    start: at('2026-12-01T09:00:00Z'),
    end: at('2026-12-01T10:00:00Z'),
    projectId,
    confidence: projectId === null ? 0 : 1,
    needsReview: false,
    ruleIds: [],
    ...extra,
  };
}

describe('projects', () => {
  it('creates with a trimmed name, an optional client and distinct default colours', async () => {
    const acme = await repo.projects.create(A, { name: '  Acme  ', client: 'Acme Corp' });
    expect(acme).toMatchObject({
      tenantId: A,
      name: 'Acme',
      client: 'Acme Corp',
      colour: PROJECT_COLOURS[0],
      archived: false,
      archivedAt: null,
    });
    expect(acme.id).toMatch(/^prj_[1-9A-HJ-NP-Za-km-z]{16}$/);
    expect(acme.createdAt).toBeInstanceOf(Date);
    const beta = await repo.projects.create(A, { name: 'Beta', colour: '#A1B2C3' });
    expect(beta).toMatchObject({ client: null, colour: '#a1b2c3' });
    const gamma = await repo.projects.create(A, { name: 'Gamma' });
    expect(gamma.colour).toBe(PROJECT_COLOURS[1]);
    expect(await repo.projects.get(A, acme.id)).toEqual(acme);
  });

  it('refuses a name already taken in the tenant, whatever its case; another tenant may use it', async () => {
    const taken = await failure(repo.projects.create(A, { name: 'ACME' }));
    expect(taken.code).toBe('already_exists');
    expect(taken.message).toBe(
      "A project named 'Acme' already exists in this tenant; names are unique whatever their case.",
    );
    const other = await repo.projects.create(B, { name: 'acme' });
    expect(other.tenantId).toBe(B);
    expect(await count(db, 'projects', A)).toBe(3);
  });

  it('refuses bad names, clients and colours with specific messages, creating nothing', async () => {
    const cases: [Parameters<typeof repo.projects.create>[1], string][] = [
      [{ name: '   ' }, 'Project name must not be empty.'],
      [{ name: 'x'.repeat(101) }, 'Project name is 101 characters long; at most 100 are allowed.'],
      [{ name: 'Tab\there' }, 'Project name must not contain control characters or line breaks.'],
      [{ name: 'Bad\uD800' }, 'Project name is not valid Unicode text (a lone surrogate).'],
      [{ name: 'Ok', client: 'c'.repeat(101) }, 'Client is 101 characters long; at most 100 are allowed.'],
      [
        { name: 'Ok', colour: 'red' },
        "Colour must be #RRGGBB (a '#' and six hexadecimal digits, e.g. #4f46e5), got 'red'.",
      ],
      [
        { name: 'Ok', colour: '#abc' },
        "Colour must be #RRGGBB (a '#' and six hexadecimal digits, e.g. #4f46e5), got '#abc'.",
      ],
      [
        { name: 'Ok', colour: '#12345g' },
        "Colour must be #RRGGBB (a '#' and six hexadecimal digits, e.g. #4f46e5), got '#12345g'.",
      ],
    ];
    for (const [input, message] of cases) {
      const error = await failure(repo.projects.create(A, input));
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toBe(message);
    }
    expect(await count(db, 'projects', A)).toBe(3);
  });

  it('lists by name, archived ones only on request', async () => {
    const delta = await repo.projects.create(A, { name: 'delta' });
    await repo.projects.archive(A, delta.id);
    expect((await repo.projects.list(A)).map((p) => p.name)).toEqual(['Acme', 'Beta', 'Gamma']);
    const all = await repo.projects.list(A, { includeArchived: true });
    expect(all.map((p) => [p.name, p.archived])).toEqual([
      ['Acme', false],
      ['Beta', false],
      ['delta', true],
      ['Gamma', false],
    ]);
    expect((await repo.projects.list(B, { includeArchived: true })).map((p) => p.name)).toEqual(['acme']);
  });

  it('updates name, client and colour; a taken name is refused', async () => {
    const [beta] = (await repo.projects.list(A)).filter((p) => p.name === 'Beta');
    if (beta === undefined) {
      throw new Error('Beta missing');
    }
    const renamed = await repo.projects.update(A, beta.id, {
      name: 'Beta 2',
      client: 'Client B',
      colour: '#FFFFFF',
    });
    expect(renamed).toMatchObject({ name: 'Beta 2', client: 'Client B', colour: '#ffffff' });
    expect(renamed.updatedAt.getTime()).toBeGreaterThanOrEqual(beta.updatedAt.getTime());
    const cleared = await repo.projects.update(A, beta.id, { client: null });
    expect(cleared).toMatchObject({ name: 'Beta 2', client: null, colour: '#ffffff' });
    const unchanged = await repo.projects.update(A, beta.id, {});
    expect(unchanged).toMatchObject({ name: 'Beta 2', client: null, colour: '#ffffff' });

    const taken = await failure(repo.projects.update(A, beta.id, { name: 'DELTA' }));
    expect(taken.code).toBe('already_exists');
    expect(taken.message).toBe(
      "A project named 'delta' already exists in this tenant (archived: unarchive it to use it again); names are unique whatever their case.",
    );
    const colour = await failure(repo.projects.update(A, beta.id, { colour: 'blue' }));
    expect(colour.code).toBe('invalid_argument');
    expect((await repo.projects.get(A, beta.id))?.name).toBe('Beta 2');
    const missing = await failure(repo.projects.update(A, 'prj_nope', { name: 'X' }));
    expect(missing.code).toBe('not_found');
    expect(missing.message).toBe('No project prj_nope in this tenant.');
  });

  it('archives (keeping the first archivedAt) and unarchives', async () => {
    const gamma = (await repo.projects.list(A)).find((p) => p.name === 'Gamma');
    if (gamma === undefined) {
      throw new Error('Gamma missing');
    }
    const archived = await repo.projects.archive(A, gamma.id);
    expect(archived.archived).toBe(true);
    expect(archived.archivedAt).toBeInstanceOf(Date);
    const again = await repo.projects.archive(A, gamma.id);
    expect(again.archivedAt).toEqual(archived.archivedAt);
    const back = await repo.projects.unarchive(A, gamma.id);
    expect(back).toMatchObject({ archived: false, archivedAt: null });
    expect((await failure(repo.projects.archive(A, 'prj_nope'))).code).toBe('not_found');
  });

  it('tenant B never reads or changes A’s projects, even with their ids', async () => {
    const [acme] = await repo.projects.list(A);
    if (acme === undefined) {
      throw new Error('no project');
    }
    expect(await repo.projects.get(B, acme.id)).toBeNull();
    for (const attempt of [
      () => repo.projects.update(B, acme.id, { name: 'Hijacked' }),
      () => repo.projects.archive(B, acme.id),
      () => repo.projects.unarchive(B, acme.id),
      () => repo.projects.delete(B, acme.id),
    ]) {
      const error = await failure(attempt());
      expect(error.code).toBe('not_found');
      expect(error.message).toBe(`No project ${acme.id} in this tenant.`);
    }
    expect(await repo.projects.get(A, acme.id)).toEqual(acme);
  });
});

describe('rules', () => {
  let acme: string;
  let beta: string;
  let bProject: string;

  beforeAll(async () => {
    acme = (await repo.projects.create(A, { name: 'Rules Acme' })).id;
    beta = (await repo.projects.create(A, { name: 'Rules Beta' })).id;
    bProject = (await repo.projects.create(B, { name: 'Rules B' })).id;
  });

  it('creates a rule by a key or by a user, with weight 1 and enabled by default', async () => {
    const byKey = await repo.rules.create(A, {
      projectId: acme,
      query: '  domain:acme.com  ',
      createdBy: { keyId: 'key_a' },
    });
    expect(byKey).toMatchObject({
      tenantId: A,
      projectId: acme,
      query: 'domain:acme.com',
      weight: 1,
      enabled: true,
      createdByKeyId: 'key_a',
      createdByUserId: null,
    });
    expect(byKey.id).toMatch(/^rul_[1-9A-HJ-NP-Za-km-z]{16}$/);
    const byUser = await repo.rules.create(A, {
      projectId: beta,
      query: 'title:"weekly sync"',
      weight: 5,
      enabled: false,
      createdBy: { userId: 'usr_a' },
    });
    expect(byUser).toMatchObject({
      weight: 5,
      enabled: false,
      createdByKeyId: null,
      createdByUserId: 'usr_a',
    });
    expect(await repo.rules.get(A, byKey.id)).toEqual(byKey);
  });

  it('refuses bad weights, queries, authors and projects with specific errors, saving nothing', async () => {
    const before = await count(db, 'rules', A);
    const base = { projectId: acme, query: 'title:x', createdBy: { keyId: 'key_a' } } as const;
    const cases: [Parameters<typeof repo.rules.create>[1], string, string][] = [
      [
        { ...base, weight: 0 },
        'invalid_argument',
        'Rule weight must be a whole number from 1 to 1000, got 0.',
      ],
      [
        { ...base, weight: 1.5 },
        'invalid_argument',
        'Rule weight must be a whole number from 1 to 1000, got 1.5.',
      ],
      [
        { ...base, weight: 1001 },
        'invalid_argument',
        'Rule weight must be a whole number from 1 to 1000, got 1001.',
      ],
      [{ ...base, query: '   ' }, 'invalid_argument', 'Rule query must not be empty.'],
      [
        { ...base, query: 'a'.repeat(RULE_QUERY_MAX + 1) },
        'invalid_argument',
        'Rule query is 2,001 characters long; at most 2,000 are allowed.',
      ],
      [
        { ...base, query: 'title:a\u0000b' },
        'invalid_argument',
        'Rule query contains a NUL character or a lone surrogate.',
      ],
      [
        { ...base, createdBy: { keyId: 'key_a', userId: 'usr_a' } as unknown as { keyId: string } },
        'invalid_argument',
        'A rule is written by exactly one API key or one user.',
      ],
      [{ ...base, createdBy: { keyId: 'key_b' } }, 'not_found', 'No API key key_b in this tenant.'],
      [{ ...base, createdBy: { userId: 'usr_b' } }, 'not_found', 'No user usr_b in this tenant.'],
      [{ ...base, projectId: bProject }, 'not_found', `No project ${bProject} in this tenant.`],
      [{ ...base, projectId: 'prj_missing' }, 'not_found', 'No project prj_missing in this tenant.'],
    ];
    for (const [input, code, message] of cases) {
      const error = await failure(repo.rules.create(A, input));
      expect([error.code, error.message]).toEqual([code, message]);
    }
    const archived = await repo.projects.create(A, { name: 'Rules Archived' });
    await repo.projects.archive(A, archived.id);
    const refused = await failure(repo.rules.create(A, { ...base, projectId: archived.id }));
    expect(refused.code).toBe('precondition_failed');
    expect(refused.message).toBe(
      `Project 'Rules Archived' (${archived.id}) is archived; unarchive it before filing time into it.`,
    );
    expect(await count(db, 'rules', A)).toBe(before);
  });

  it('lists with filters; only enabled rules of live projects vote', async () => {
    const all = await repo.rules.list(A);
    expect(all.map((r) => r.query)).toEqual(['domain:acme.com', 'title:"weekly sync"']);
    expect((await repo.rules.list(A, { projectId: beta })).map((r) => r.projectId)).toEqual([beta]);
    expect((await repo.rules.list(A, { enabled: false })).map((r) => r.projectId)).toEqual([beta]);
    expect((await repo.rules.voting(A)).map((r) => r.query)).toEqual(['domain:acme.com']);
    await repo.projects.archive(A, acme);
    expect(await repo.rules.voting(A)).toEqual([]);
    await repo.projects.unarchive(A, acme);
    expect(await repo.rules.list(B)).toEqual([]);
  });

  it('updates query, weight, project and enabled; enable and disable', async () => {
    const [rule] = await repo.rules.list(A, { projectId: acme });
    if (rule === undefined) {
      throw new Error('no rule');
    }
    const moved = await repo.rules.update(A, rule.id, {
      query: 'domain:acme.io',
      weight: 3,
      projectId: beta,
    });
    expect(moved).toMatchObject({ query: 'domain:acme.io', weight: 3, projectId: beta, enabled: true });
    expect((await repo.rules.setEnabled(A, rule.id, false)).enabled).toBe(false);
    expect((await repo.rules.setEnabled(A, rule.id, true)).enabled).toBe(true);
    const back = await repo.rules.update(A, rule.id, { projectId: acme });
    expect(back).toMatchObject({ query: 'domain:acme.io', weight: 3, projectId: acme });

    const weight = await failure(repo.rules.update(A, rule.id, { weight: -1 }));
    expect(weight.message).toBe('Rule weight must be a whole number from 1 to 1000, got -1.');
    const foreign = await failure(repo.rules.update(A, rule.id, { projectId: bProject }));
    expect([foreign.code, foreign.message]).toEqual(['not_found', `No project ${bProject} in this tenant.`]);
    expect(await repo.rules.get(A, rule.id)).toEqual(back);
    const missing = await failure(repo.rules.update(A, 'rul_nope', { enabled: false }));
    expect([missing.code, missing.message]).toEqual(['not_found', 'No rule rul_nope in this tenant.']);
  });

  it('tenant B never reads or changes A’s rules, even with their ids', async () => {
    const rules = await repo.rules.list(A);
    const [rule] = rules;
    if (rule === undefined) {
      throw new Error('no rule');
    }
    expect(await repo.rules.get(B, rule.id)).toBeNull();
    for (const attempt of [
      () => repo.rules.update(B, rule.id, { query: 'title:stolen' }),
      () => repo.rules.setEnabled(B, rule.id, false),
      () => repo.rules.delete(B, rule.id),
    ]) {
      const error = await failure(attempt());
      expect([error.code, error.message]).toEqual(['not_found', `No rule ${rule.id} in this tenant.`]);
    }
    // B cannot write a rule into A's project either.
    const error = await failure(
      repo.rules.create(B, { projectId: acme, query: 'x', createdBy: { keyId: 'key_b' } }),
    );
    expect(error.code).toBe('not_found');
    expect(await repo.rules.list(A)).toEqual(rules);
  });

  it('deletes a rule and returns it; deleting the author keeps the rule', async () => {
    const temp = await repo.rules.create(A, {
      projectId: acme,
      query: 'title:temp',
      createdBy: { keyId: 'key_a' },
    });
    expect(await repo.rules.delete(A, temp.id)).toEqual(temp);
    expect(await repo.rules.get(A, temp.id)).toBeNull();
    expect((await failure(repo.rules.delete(A, temp.id))).code).toBe('not_found');

    await db.prisma.user.create({ data: { id: 'usr_gone', tenantId: A, email: 'gone@example.com' } });
    const byGone = await repo.rules.create(A, {
      projectId: acme,
      query: 'title:orphan',
      createdBy: { userId: 'usr_gone' },
    });
    await db.prisma.user.delete({ where: { id: 'usr_gone' } });
    expect(await repo.rules.get(A, byGone.id)).toMatchObject({
      query: 'title:orphan',
      createdByKeyId: null,
      createdByUserId: null,
    });
    await repo.rules.delete(A, byGone.id);
  });
});

describe('classifications', () => {
  let acme: string;
  let beta: string;
  let bProject: string;

  beforeAll(async () => {
    acme = (await repo.projects.create(A, { name: 'Cls Acme' })).id;
    beta = (await repo.projects.create(A, { name: 'Cls Beta' })).id;
    bProject = (await repo.projects.create(B, { name: 'Cls B' })).id;
  });

  it('stores rule verdicts and reports what was created, changed and unchanged', async () => {
    const first = await repo.classifications.upsertFromRules(A, [
      verdict('ev1', acme, { confidence: 1, ruleIds: ['rul_1'] }),
      verdict('ev2', beta, { confidence: 0.6, needsReview: true, ruleIds: ['rul_2', 'rul_3'] }),
      verdict('ev3', null, { confidence: 0.5, ruleIds: ['rul_1', 'rul_2'] }),
    ]);
    expect(first).toMatchObject({ created: 3, changed: 0, unchanged: 0, keptManual: 0 });
    expect(first.changes).toEqual([
      {
        calendarId: 'cal_a1',
        eventId: 'ev1',
        before: null,
        after: { projectId: acme, skip: false, needsReview: false },
      },
      {
        calendarId: 'cal_a1',
        eventId: 'ev2',
        before: null,
        after: { projectId: beta, skip: false, needsReview: true },
      },
      {
        calendarId: 'cal_a1',
        eventId: 'ev3',
        before: null,
        after: { projectId: null, skip: false, needsReview: false },
      },
    ]);
    const stored = await repo.classifications.getMany(A, 'cal_a1', ['ev1', 'ev2', 'ev3', 'ev404']);
    expect([...stored.keys()].sort()).toEqual(['ev1', 'ev2', 'ev3']);
    const ev2 = stored.get('ev2') as ClassificationRecord;
    expect(ev2).toMatchObject({
      tenantId: A,
      calendarId: 'cal_a1',
      eventId: 'ev2',
      projectId: beta,
      skip: false,
      source: 'rule',
      needsReview: true,
      start: at('2026-12-01T09:00:00Z'),
      end: at('2026-12-01T10:00:00Z'),
      ruleIds: ['rul_2', 'rul_3'],
    });
    expect(ev2.confidence).toBeCloseTo(0.6, 6);
    expect(stored.get('ev3')).toMatchObject({ projectId: null, skip: false, source: 'rule' });

    const second = await repo.classifications.upsertFromRules(A, [
      verdict('ev1', acme, { confidence: 0.9, ruleIds: ['rul_1', 'rul_4'] }),
      verdict('ev2', acme, { confidence: 0.85, ruleIds: ['rul_1'] }),
      verdict('ev3', null, { confidence: 0.5, ruleIds: ['rul_1', 'rul_2'] }),
    ]);
    expect(second).toMatchObject({ created: 0, changed: 1, unchanged: 2, keptManual: 0 });
    expect(second.changes).toEqual([
      {
        calendarId: 'cal_a1',
        eventId: 'ev2',
        before: { projectId: beta, skip: false, needsReview: true },
        after: { projectId: acme, skip: false, needsReview: false },
      },
    ]);
    const ev1 = (await repo.classifications.getMany(A, 'cal_a1', ['ev1'])).get('ev1');
    expect(ev1?.ruleIds).toEqual(['rul_1', 'rul_4']);
    expect(ev1?.confidence).toBeCloseTo(0.9, 6);
    expect(await repo.classifications.upsertFromRules(A, [])).toEqual({
      created: 0,
      changed: 0,
      unchanged: 0,
      keptManual: 0,
      changes: [],
    });
  });

  it('never overwrites a manual classification; its times follow the occurrence', async () => {
    const manual = await repo.classifications.setManual(
      A,
      {
        calendarId: 'cal_a1',
        eventId: 'ev1',
        start: at('2026-12-01T09:00:00Z'),
        end: at('2026-12-01T10:00:00Z'),
      },
      { projectId: beta },
    );
    expect(manual).toMatchObject({
      projectId: beta,
      skip: false,
      source: 'manual',
      confidence: 1,
      needsReview: false,
      ruleIds: [],
    });
    const applied = await repo.classifications.upsertFromRules(A, [
      verdict('ev1', acme, {
        confidence: 1,
        ruleIds: ['rul_1'],
        start: at('2026-12-02T09:00:00Z'),
        end: at('2026-12-02T10:30:00Z'),
      }),
    ]);
    expect(applied).toMatchObject({ created: 0, changed: 0, unchanged: 0, keptManual: 1, changes: [] });
    expect((await repo.classifications.getMany(A, 'cal_a1', ['ev1'])).get('ev1')).toMatchObject({
      projectId: beta,
      source: 'manual',
      confidence: 1,
      ruleIds: [],
      start: at('2026-12-02T09:00:00Z'),
      end: at('2026-12-02T10:30:00Z'),
    });

    const skipped = await repo.classifications.setManual(
      A,
      {
        calendarId: 'cal_a1',
        eventId: 'ev3',
        start: at('2026-12-01T09:00:00Z'),
        end: at('2026-12-01T10:00:00Z'),
      },
      { skip: true },
    );
    expect(skipped).toMatchObject({ projectId: null, skip: true, source: 'manual' });
    const again = await repo.classifications.upsertFromRules(A, [verdict('ev3', acme, { confidence: 1 })]);
    expect(again.keptManual).toBe(1);
    expect((await repo.classifications.getMany(A, 'cal_a1', ['ev3'])).get('ev3')).toMatchObject({
      skip: true,
      source: 'manual',
    });
  });

  it('refuses another tenant’s calendars and projects, and bad input, writing nothing', async () => {
    const before = await count(db, 'classifications', A);
    const occurrence = {
      calendarId: 'cal_a2',
      eventId: 'evx',
      start: at('2026-12-01T09:00:00Z'),
      end: at('2026-12-01T10:00:00Z'),
    };
    const cases: [() => Promise<unknown>, string, string][] = [
      [
        () =>
          repo.classifications.upsertFromRules(A, [
            verdict('ok', acme),
            verdict('evx', acme, { calendarId: 'cal_b' }),
          ]),
        'not_found',
        'No calendar cal_b in this tenant.',
      ],
      [
        () => repo.classifications.upsertFromRules(A, [verdict('ok', acme), verdict('evy', bProject)]),
        'not_found',
        `No project ${bProject} in this tenant.`,
      ],
      [
        () => repo.classifications.upsertFromRules(A, [verdict('dup', acme), verdict('dup', beta)]),
        'invalid_argument',
        'Event dup of calendar cal_a1 appears twice in one batch.',
      ],
      [
        () => repo.classifications.upsertFromRules(A, [verdict('c', acme, { confidence: 1.5 })]),
        'invalid_argument',
        'Confidence of event c must be from 0 to 1, got 1.5.',
      ],
      [
        () =>
          repo.classifications.upsertFromRules(A, [verdict('t', acme, { end: at('2026-12-01T08:00:00Z') })]),
        'invalid_argument',
        'Event t ends before it starts.',
      ],
      [
        () => repo.classifications.upsertFromRules(A, [verdict('', acme)]),
        'invalid_argument',
        'An event id must be 1 to 2048 characters.',
      ],
      [
        () => repo.classifications.setManual(A, { ...occurrence, calendarId: 'cal_b' }, { projectId: acme }),
        'not_found',
        'No calendar cal_b in this tenant.',
      ],
      [
        () => repo.classifications.setManual(A, occurrence, { projectId: bProject }),
        'not_found',
        `No project ${bProject} in this tenant.`,
      ],
      [
        () =>
          repo.classifications.setManual(A, { ...occurrence, start: new Date(Number.NaN) }, { skip: true }),
        'invalid_argument',
        'Event evx has no valid start.',
      ],
      [
        () => repo.classifications.setManual(A, occurrence, {} as { skip: true }),
        'invalid_argument',
        'A manual classification names a project or is skip.',
      ],
      [
        () =>
          repo.classifications.setManualMany(A, [occurrence, { ...occurrence, calendarId: 'cal_b' }], {
            skip: true,
          }),
        'not_found',
        'No calendar cal_b in this tenant.',
      ],
      [
        () => repo.classifications.setManualMany(A, [occurrence, occurrence], { projectId: acme }),
        'invalid_argument',
        'Event evx of calendar cal_a2 appears twice in one batch.',
      ],
    ];
    for (const [attempt, code, message] of cases) {
      const error = await failure(attempt());
      expect([error.code, error.message]).toEqual([code, message]);
    }
    const archived = await repo.projects.create(A, { name: 'Cls Archived' });
    await repo.projects.archive(A, archived.id);
    const refused = await failure(repo.classifications.setManual(A, occurrence, { projectId: archived.id }));
    expect(refused.code).toBe('precondition_failed');
    expect(await count(db, 'classifications', A)).toBe(before);
    expect(await repo.classifications.getMany(A, 'cal_a1', ['ok'])).toEqual(new Map());
  });

  it('files many occurrences by hand at once, replacing what rules filed', async () => {
    const times = (day: number) => ({
      start: at(`2027-03-0${day}T08:00:00Z`),
      end: at(`2027-03-0${day}T08:15:00Z`),
    });
    await repo.classifications.upsertFromRules(A, [verdict('many_2', acme, { confidence: 1, ...times(2) })]);
    const occurrences = [1, 2, 3].map((day) => ({
      calendarId: 'cal_a2',
      eventId: `many_${day}`,
      ...times(day),
    }));
    const filed = await repo.classifications.setManualMany(A, occurrences, { projectId: beta });
    expect(filed.map((record) => [record.eventId, record.projectId, record.source])).toEqual([
      ['many_1', beta, 'manual'],
      ['many_2', beta, 'manual'],
      ['many_3', beta, 'manual'],
    ]);
    const stored = await repo.classifications.getMany(A, 'cal_a2', ['many_1', 'many_2', 'many_3']);
    expect(
      [...stored.values()].every((record) => record.source === 'manual' && record.projectId === beta),
    ).toBe(true);
    expect(await repo.classifications.setManualMany(A, [], { skip: true })).toEqual([]);
  });

  it('lists occurrences overlapping a range, with filters, by start', async () => {
    await repo.classifications.upsertFromRules(A, [
      verdict('r-before', acme, {
        calendarId: 'cal_a2',
        start: at('2026-11-30T08:00:00Z'),
        end: at('2026-11-30T09:00:00Z'),
      }),
      verdict('r-straddle', acme, {
        calendarId: 'cal_a2',
        start: at('2026-11-30T23:30:00Z'),
        end: at('2026-12-01T00:30:00Z'),
      }),
      verdict('r-inside', beta, {
        calendarId: 'cal_a2',
        start: at('2026-12-01T12:00:00Z'),
        end: at('2026-12-01T13:00:00Z'),
        needsReview: true,
        confidence: 0.7,
      }),
      verdict('r-instant', acme, {
        calendarId: 'cal_a2',
        start: at('2026-12-01T00:00:00Z'),
        end: at('2026-12-01T00:00:00Z'),
      }),
      verdict('r-ends-at-min', acme, {
        calendarId: 'cal_a2',
        start: at('2026-11-30T22:00:00Z'),
        end: at('2026-12-01T00:00:00Z'),
      }),
      verdict('r-at-max', acme, {
        calendarId: 'cal_a2',
        start: at('2026-12-02T00:00:00Z'),
        end: at('2026-12-02T01:00:00Z'),
      }),
    ]);
    const min = at('2026-12-01T00:00:00Z');
    const max = at('2026-12-02T00:00:00Z');
    const ids = (rows: ClassificationRecord[]) => rows.map((row) => `${row.calendarId}/${row.eventId}`);
    expect(ids(await repo.classifications.listInRange(A, ['cal_a2'], min, max))).toEqual([
      'cal_a2/r-straddle',
      'cal_a2/r-instant',
      'cal_a2/r-inside',
    ]);
    const both = ids(await repo.classifications.listInRange(A, ['cal_a1', 'cal_a2'], min, max));
    expect(both).toContain('cal_a1/ev2');
    expect(both).toContain('cal_a2/r-inside');
    expect(ids(await repo.classifications.listInRange(A, ['cal_a2'], min, max, { projectId: beta }))).toEqual(
      ['cal_a2/r-inside'],
    );
    expect(
      ids(await repo.classifications.listInRange(A, ['cal_a2'], min, max, { needsReview: true })),
    ).toEqual(['cal_a2/r-inside']);
    expect(
      ids(
        await repo.classifications.listInRange(A, ['cal_a1', 'cal_a2'], min, at('2026-12-03T00:00:00Z'), {
          source: 'manual',
        }),
      ),
    ).toEqual(['cal_a1/ev3', 'cal_a1/ev1']);
    expect(await repo.classifications.listInRange(A, [], min, max)).toEqual([]);
  });

  it('tenant B never sees or changes A’s classifications, even with A’s calendar ids', async () => {
    const min = at('2026-01-01T00:00:00Z');
    const max = at('2028-01-01T00:00:00Z');
    const aRows = await repo.classifications.listInRange(A, ['cal_a1', 'cal_a2'], min, max);
    expect(aRows.length).toBeGreaterThan(0);
    expect(await repo.classifications.listInRange(B, ['cal_a1', 'cal_a2'], min, max)).toEqual([]);
    expect(await repo.classifications.getMany(B, 'cal_a1', ['ev1', 'ev2'])).toEqual(new Map());
    expect(await repo.classifications.clear(B, 'cal_a1', ['ev1', 'ev2'])).toBe(0);
    const occurrence = { calendarId: 'cal_a1', eventId: 'ev2', start: min, end: min };
    expect(
      (await failure(repo.classifications.setManual(B, occurrence, { projectId: bProject }))).message,
    ).toBe('No calendar cal_a1 in this tenant.');
    expect((await failure(repo.classifications.upsertFromRules(B, [verdict('ev2', bProject)]))).message).toBe(
      'No calendar cal_a1 in this tenant.',
    );
    expect(await repo.classifications.listInRange(A, ['cal_a1', 'cal_a2'], min, max)).toEqual(aRows);
  });

  it('clears classifications, manual ones included', async () => {
    expect(await repo.classifications.clear(A, 'cal_a1', ['ev1', 'ev2', 'ev404'])).toBe(2);
    expect([...(await repo.classifications.getMany(A, 'cal_a1', ['ev1', 'ev2', 'ev3'])).keys()]).toEqual([
      'ev3',
    ]);
    expect(await repo.classifications.clear(A, 'cal_a1', [])).toBe(0);
  });

  it('deleting a calendar deletes its classifications', async () => {
    await db.prisma.calendar.create({
      data: {
        id: 'cal_a3',
        tenantId: A,
        connectionId: 'con_a',
        externalId: 'cal_a3',
        summary: 'c3',
        timeZone: 'UTC',
      },
    });
    await repo.classifications.upsertFromRules(A, [verdict('gone', acme, { calendarId: 'cal_a3' })]);
    await db.prisma.calendar.delete({ where: { id: 'cal_a3' } });
    const { rows } = await db.pool.query(`SELECT 1 FROM classifications WHERE calendar_id = 'cal_a3'`);
    expect(rows).toEqual([]);
  });

  it('deleting a project is refused while rules use it; then its occurrences return to pending', async () => {
    const doomed = await repo.projects.create(A, { name: 'Doomed' });
    const rule = await repo.rules.create(A, {
      projectId: doomed.id,
      query: 'title:doom',
      createdBy: { keyId: 'key_a' },
    });
    await repo.classifications.upsertFromRules(A, [verdict('doom1', doomed.id), verdict('keep1', acme)]);
    await repo.classifications.setManual(
      A,
      {
        calendarId: 'cal_a1',
        eventId: 'doom2',
        start: at('2026-12-01T09:00:00Z'),
        end: at('2026-12-01T10:00:00Z'),
      },
      { projectId: doomed.id },
    );
    const refused = await failure(repo.projects.delete(A, doomed.id));
    expect(refused.code).toBe('precondition_failed');
    expect(refused.message).toBe(
      "Project 'Doomed' cannot be deleted while a rule files time into it; delete those rules or move them to another project first, or archive the project instead.",
    );
    expect(refused.context).toEqual({ ruleIds: [rule.id] });
    expect(await repo.projects.get(A, doomed.id)).not.toBeNull();

    await repo.rules.delete(A, rule.id);
    expect(await repo.projects.delete(A, doomed.id)).toEqual({ classificationsCleared: 2 });
    expect(await repo.projects.get(A, doomed.id)).toBeNull();
    const left = await repo.classifications.getMany(A, 'cal_a1', ['doom1', 'doom2', 'keep1']);
    expect([...left.keys()]).toEqual(['keep1']);
    expect((await failure(repo.projects.delete(A, doomed.id))).code).toBe('not_found');
  });
});

describe('the database itself keeps tenants apart and values valid', () => {
  it('refuses rows that join tenants or break the rules', async () => {
    const aProject = (await repo.projects.create(A, { name: 'Db A' })).id;
    const bProject = (await repo.projects.create(B, { name: 'Db B' })).id;
    const rejects = (sql: string, params: unknown[], pattern: RegExp) =>
      expect(db.pool.query(sql, params)).rejects.toThrow(pattern);

    // A rule of tenant B cannot point at A's project, nor be written by A's key.
    await rejects(
      `INSERT INTO rules (id, tenant_id, project_id, query, created_by_key_id) VALUES ('rul_x', $1, $2, 'x', 'key_b')`,
      [B, aProject],
      /rules_project_id_tenant_id_fkey/,
    );
    await rejects(
      `INSERT INTO rules (id, tenant_id, project_id, query, created_by_key_id) VALUES ('rul_x', $1, $2, 'x', 'key_a')`,
      [B, bProject],
      /rules_created_by_key_id_tenant_id_fkey/,
    );
    await rejects(
      `INSERT INTO rules (id, tenant_id, project_id, query, created_by_user_id) VALUES ('rul_x', $1, $2, 'x', 'usr_a')`,
      [B, bProject],
      /rules_created_by_user_id_tenant_id_fkey/,
    );
    // A classification of tenant B cannot name A's calendar, nor A's project.
    await rejects(
      `INSERT INTO classifications (tenant_id, calendar_id, event_id, project_id, source, confidence, start_at, end_at)
       VALUES ($1, 'cal_a1', 'e', $2, 'rule', 1, now(), now())`,
      [B, bProject],
      /classifications_calendar_id_tenant_id_fkey/,
    );
    await rejects(
      `INSERT INTO classifications (tenant_id, calendar_id, event_id, project_id, source, confidence, start_at, end_at)
       VALUES ($1, 'cal_b', 'e', $2, 'rule', 1, now(), now())`,
      [B, aProject],
      /classifications_project_id_tenant_id_fkey/,
    );
    // Checks.
    const rule = `INSERT INTO rules (id, tenant_id, project_id, query, weight, created_by_key_id, created_by_user_id)
                  VALUES ('rul_y', $1, $2, $3, $4, $5, $6)`;
    await rejects(rule, [A, aProject, 'x', 0, 'key_a', null], /rules_weight_range/);
    await rejects(rule, [A, aProject, '', 1, 'key_a', null], /rules_query_length/);
    await rejects(rule, [A, aProject, 'x'.repeat(2001), 1, 'key_a', null], /rules_query_length/);
    await rejects(rule, [A, aProject, 'x', 1, 'key_a', 'usr_a'], /rules_one_author/);
    await rejects(
      `INSERT INTO projects (id, tenant_id, name, colour) VALUES ('prj_y', $1, 'Y', 'red')`,
      [A],
      /projects_colour_hex/,
    );
    await rejects(
      `INSERT INTO projects (id, tenant_id, name, colour) VALUES ('prj_y', $1, 'DB a', '#000000')`,
      [A],
      /projects_tenant_id_name_key/,
    );
    const cls = `INSERT INTO classifications (tenant_id, calendar_id, event_id, project_id, skip, source, confidence, start_at, end_at)
                 VALUES ($1, 'cal_a1', 'chk', $2, $3, $4, $5, $6, $7)`;
    const t = '2026-12-01T09:00:00Z';
    await rejects(cls, [A, null, false, 'manual', 1, t, t], /classifications_manual_decides/);
    await rejects(cls, [A, aProject, true, 'manual', 1, t, t], /classifications_skip_has_no_project/);
    await rejects(cls, [A, aProject, false, 'rule', 1.5, t, t], /classifications_confidence_range/);
    await rejects(cls, [A, aProject, false, 'guess', 1, t, t], /classifications_source/);
    await rejects(
      cls,
      [A, aProject, false, 'rule', 1, t, '2026-12-01T08:00:00Z'],
      /classifications_time_order/,
    );
    // A project that a rule files into cannot be deleted behind the repository's back.
    await db.pool.query(
      `INSERT INTO rules (id, tenant_id, project_id, query, created_by_key_id) VALUES ('rul_z', $1, $2, 'x', 'key_a')`,
      [A, aProject],
    );
    await rejects(`DELETE FROM projects WHERE id = $1`, [aProject], /rules_project_id_tenant_id_fkey/);
  });
});
