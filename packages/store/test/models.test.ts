import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ApiKeyRepository, TOOLSETS } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Every Prisma model is written and read back through the client against the migrated
// database: a schema.prisma that drifts from the SQL migrations fails here.
describe('every model round-trips through the migrated database', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  /** Tenant `tnt_<id>` and its API key `key_<id>`, every other field left to its default. */
  const tenantWithKey = async (id: string, name: string) => {
    await db.prisma.tenant.create({ data: { id: `tnt_${id}`, name } });
    return db.prisma.apiKey.create({
      data: {
        id: `key_${id}`,
        tenantId: `tnt_${id}`,
        name: 'agent',
        prefix: `cg_live_${id.repeat(4).slice(0, 4)}`,
        hash: createHash('sha256').update(id).digest(),
      },
    });
  };

  it('tenant, user, api key (with its defaults), connection, calendar, grant, audit entry, local event', async () => {
    const p = db.prisma;
    const tenant = await p.tenant.create({ data: { id: 'tnt_rt', name: 'Round Trip' } });
    expect(await p.tenant.findUniqueOrThrow({ where: { id: tenant.id } })).toEqual(tenant);
    expect(tenant.timeZone).toBeNull();
    const zoned = await p.tenant.update({ where: { id: tenant.id }, data: { timeZone: 'Europe/Berlin' } });
    expect(await p.tenant.findUniqueOrThrow({ where: { id: tenant.id } })).toEqual(zoned);
    expect(zoned.timeZone).toBe('Europe/Berlin');

    const user = await p.user.create({
      data: { id: 'usr_rt', tenantId: tenant.id, email: 'ada@example.com', passwordHash: '$argon2id$x' },
    });
    expect(await p.user.findUniqueOrThrow({ where: { email: 'ada@example.com' } })).toEqual(user);

    const expiresAt = new Date('2027-01-01T00:00:00.000Z');
    const key = await p.apiKey.create({
      data: {
        id: 'key_rt',
        tenantId: tenant.id,
        name: 'agent',
        prefix: 'cg_live_abcd',
        hash: new Uint8Array(32).fill(7),
        expiresAt,
      },
    });
    const keyBack = await p.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(Buffer.from(keyBack.hash)).toEqual(Buffer.alloc(32, 7));
    expect(keyBack.expiresAt).toEqual(expiresAt);
    expect(keyBack.revokedAt).toBeNull();

    const connection = await p.connection.create({
      data: {
        id: 'con_rt',
        tenantId: tenant.id,
        provider: 'google',
        accountEmail: 'ada@example.com',
        auth: 'oauth',
        status: 'needs_reauth',
        statusDetail: 'invalid_grant',
        credentialsKeyId: 'k_1',
        credentials: new Uint8Array([1, 2, 3]),
      },
    });
    const connectionBack = await p.connection.findUniqueOrThrow({ where: { id: connection.id } });
    expect(connectionBack.status).toBe('needs_reauth');
    expect(Buffer.from(connectionBack.credentials ?? [])).toEqual(Buffer.from([1, 2, 3]));

    const calendar = await p.calendar.create({
      data: {
        id: 'cal_rt',
        tenantId: tenant.id,
        connectionId: connection.id,
        externalId: 'ada@example.com',
        summary: 'Ada',
        timeZone: 'Europe/London',
        primary: true,
        accessRole: 'owner',
      },
    });
    expect(await p.calendar.findUniqueOrThrow({ where: { id: calendar.id } })).toEqual(calendar);

    const grant = await p.grant.create({
      data: { tenantId: tenant.id, keyId: key.id, calendarId: calendar.id, canRead: true, canWrite: true },
    });
    expect(
      await p.grant.findUniqueOrThrow({
        where: { keyId_calendarId: { keyId: key.id, calendarId: calendar.id } },
      }),
    ).toEqual(grant);

    // A key's own default calendar and time zone.
    const keyWithDefaults = await p.apiKey.update({
      where: { id: key.id },
      data: { defaultCalendarId: calendar.id, timeZone: 'Asia/Tokyo' },
    });
    expect(keyWithDefaults).toMatchObject({ defaultCalendarId: calendar.id, timeZone: 'Asia/Tokyo' });
    expect(await p.apiKey.findUniqueOrThrow({ where: { id: key.id } })).toEqual(keyWithDefaults);
    expect(
      await p.apiKey.findUniqueOrThrow({ where: { id: key.id }, select: { defaultCalendar: true } }),
    ).toEqual({ defaultCalendar: calendar });

    const audit = await p.auditEntry.create({
      data: {
        tenantId: tenant.id,
        keyId: key.id,
        requestId: 'req_1',
        tool: 'list_events',
        calendarIds: [calendar.id],
        outcome: 'ok',
        latencyMs: 12,
      },
    });
    expect(await p.auditEntry.findUniqueOrThrow({ where: { id: audit.id } })).toEqual(audit);

    const state = await p.oAuthState.create({
      data: {
        nonce: 'n1',
        tenantId: tenant.id,
        userId: user.id,
        codeVerifier: 'v'.repeat(43),
        grantAccess: 'read',
        grantKeyIds: [key.id],
        expiresAt: new Date('2026-12-01T00:10:00Z'),
      },
    });
    expect(await p.oAuthState.findUniqueOrThrow({ where: { nonce: 'n1' } })).toEqual(state);

    const feed = await p.calendarFeed.create({
      data: { id: 'fed_rt', tenantId: tenant.id, calendarId: calendar.id, tokenHash: 'a'.repeat(64) },
    });
    expect(await p.calendarFeed.findUniqueOrThrow({ where: { id: feed.id } })).toEqual(feed);
    expect(feed.revokedAt).toBeNull();

    const event = await p.localEvent.create({
      data: {
        calendarId: calendar.id,
        id: 'abcdef0123',
        iCalUid: 'abcdef0123@calgate',
        summary: 'Standup',
        startAt: new Date('2026-12-01T09:00:00Z'),
        endAt: new Date('2026-12-01T09:15:00Z'),
        startTimeZone: 'Europe/London',
        endTimeZone: 'Europe/London',
        recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
        seriesEndAt: new Date('2026-12-03T09:15:00Z'),
        attendees: [{ email: 'bob@example.com', responseStatus: 'accepted' }],
        reminders: { useDefault: false, overrides: [] },
        searchDoc: 'standup | bob example com',
        etag: '"1"',
      },
    });
    expect(
      await p.localEvent.findUniqueOrThrow({
        where: { calendarId_id: { calendarId: calendar.id, id: event.id } },
      }),
    ).toEqual(event);

    const mirrored = await p.mirrorEvent.create({
      data: {
        calendarId: calendar.id,
        eventId: 'abcdef0124',
        tenantId: tenant.id,
        status: 'confirmed',
        summary: 'Café',
        startAt: new Date('2026-12-01T09:00:00Z'),
        endAt: new Date('2026-12-01T10:00:00Z'),
        raw: { id: 'abcdef0124', summary: 'Café' },
        searchDoc: 'cafe',
      },
    });
    expect(
      await p.mirrorEvent.findUniqueOrThrow({
        where: { calendarId_eventId: { calendarId: calendar.id, eventId: mirrored.eventId } },
      }),
    ).toEqual(mirrored);
    expect(mirrored).toMatchObject({ searchDoc: 'cafe', summaryFolded: 'cafe' });

    // Each sync state takes a version of its own from the sequence, never one used before.
    const syncState = await p.mirrorSyncState.create({
      data: { calendarId: calendar.id, tenantId: tenant.id },
    });
    expect(await p.mirrorSyncState.findUniqueOrThrow({ where: { calendarId: calendar.id } })).toEqual(
      syncState,
    );
    await p.mirrorSyncState.delete({ where: { calendarId: calendar.id } });
    const again = await p.mirrorSyncState.create({ data: { calendarId: calendar.id, tenantId: tenant.id } });
    expect(again.version).toBeGreaterThan(syncState.version);
  });

  it('enforces the constraints the model relies on', async () => {
    const p = db.prisma;
    await tenantWithKey('other', 'Other');
    // A grant joining another tenant's key to this tenant's calendar cannot exist.
    await expect(
      p.grant.create({
        data: {
          tenantId: 'tnt_rt',
          keyId: 'key_other',
          calendarId: 'cal_rt',
          canRead: true,
          canWrite: false,
        },
      }),
    ).rejects.toThrow();
    await expect(
      p.grant.create({
        data: {
          tenantId: 'tnt_other',
          keyId: 'key_other',
          calendarId: 'cal_rt',
          canRead: true,
          canWrite: false,
        },
      }),
    ).rejects.toThrow();
    // A key's default calendar must be of the key's own tenant.
    await expect(
      p.apiKey.update({ where: { id: 'key_other' }, data: { defaultCalendarId: 'cal_rt' } }),
    ).rejects.toThrow();
    await expect(
      db.pool.query(`UPDATE api_keys SET default_calendar_id = 'cal_rt' WHERE id = 'key_other'`),
    ).rejects.toThrow(/api_keys_default_calendar_id_tenant_id_fkey/);
    // Removing a key's default calendar clears only the default: the key keeps its tenant and zone.
    await p.calendar.create({
      data: {
        id: 'cal_gone',
        tenantId: 'tnt_rt',
        connectionId: 'con_rt',
        externalId: 'gone@example.com',
        summary: 'Gone',
        timeZone: 'UTC',
      },
    });
    await p.apiKey.update({ where: { id: 'key_rt' }, data: { defaultCalendarId: 'cal_gone' } });
    await p.calendar.delete({ where: { id: 'cal_gone' } });
    expect(await p.apiKey.findUniqueOrThrow({ where: { id: 'key_rt' } })).toMatchObject({
      tenantId: 'tnt_rt',
      defaultCalendarId: null,
      timeZone: 'Asia/Tokyo',
    });
    // Write without read is refused by the database itself.
    await expect(db.pool.query(`UPDATE grants SET can_read = false WHERE key_id = 'key_rt'`)).rejects.toThrow(
      /grants_write_implies_read/,
    );
    // A ciphertext without its key id is refused.
    await expect(
      db.pool.query(`UPDATE connections SET credentials_key_id = NULL WHERE id = 'con_rt'`),
    ).rejects.toThrow(/connections_credentials_sealed/);
    // Deleting a tenant removes everything it owns.
    await p.tenant.delete({ where: { id: 'tnt_rt' } });
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*) FROM calendars)::int + (SELECT count(*) FROM grants)::int
            + (SELECT count(*) FROM local_events)::int + (SELECT count(*) FROM audit_log)::int
            + (SELECT count(*) FROM oauth_states)::int AS n`,
    );
    expect(rows[0].n).toBe(0);
  });

  it('session: keyed by a 32-byte token hash, gone with its user or tenant', async () => {
    const p = db.prisma;
    await p.tenant.create({ data: { id: 'tnt_ses', name: 'Sessions' } });
    await p.user.create({ data: { id: 'usr_ses', tenantId: 'tnt_ses', email: 'ses@example.com' } });
    const session = await p.session.create({
      data: {
        id: new Uint8Array(32).fill(9),
        userId: 'usr_ses',
        tenantId: 'tnt_ses',
        expiresAt: new Date('2027-01-01T12:00:00.000Z'),
      },
    });
    const back = await p.session.findUniqueOrThrow({ where: { id: session.id } });
    expect(back).toEqual(session);
    expect(Buffer.from(back.id)).toEqual(Buffer.alloc(32, 9));
    expect(back.revokedAt).toBeNull();
    expect(back.lastSeenAt).toBeInstanceOf(Date);
    const revokedAt = new Date('2026-12-01T00:00:00.000Z');
    expect(
      await p.session.update({ where: { id: session.id }, data: { revokedAt }, select: { revokedAt: true } }),
    ).toEqual({ revokedAt });
    // Only a SHA-256 can be a session id: a raw token (43 characters) is refused.
    await expect(
      p.session.create({
        data: {
          id: new Uint8Array(Buffer.from('A'.repeat(43))),
          userId: 'usr_ses',
          tenantId: 'tnt_ses',
          expiresAt: new Date('2027-01-01T12:00:00.000Z'),
        },
      }),
    ).rejects.toThrow();
    await expect(
      db.pool.query(
        `INSERT INTO sessions (id, user_id, tenant_id, expires_at) VALUES ($1, 'usr_ses', 'tnt_ses', now())`,
        [Buffer.alloc(16)],
      ),
    ).rejects.toThrow(/sessions_id_is_sha256/);
    await p.user.delete({ where: { id: 'usr_ses' } });
    expect(await p.session.count({ where: { tenantId: 'tnt_ses' } })).toBe(0);
    await p.user.create({ data: { id: 'usr_ses2', tenantId: 'tnt_ses', email: 'ses2@example.com' } });
    await p.session.create({
      data: { id: new Uint8Array(32).fill(8), userId: 'usr_ses2', tenantId: 'tnt_ses', expiresAt: revokedAt },
    });
    await p.tenant.delete({ where: { id: 'tnt_ses' } });
    expect(await p.session.count()).toBe(0);
  });

  it('api key toolsets: the default set, only known names, at least one; the repository checks first', async () => {
    const p = db.prisma;
    const key = await tenantWithKey('ts', 'Toolsets');
    expect(key.toolsets).toEqual(['calendar', 'booking', 'search']);
    const changed = await p.apiKey.update({
      where: { id: key.id },
      data: { toolsets: ['calendar', 'rules'] },
    });
    expect(await p.apiKey.findUniqueOrThrow({ where: { id: key.id } })).toEqual(changed);
    for (const bad of ["'{calendar,nope}'", "'{}'", 'ARRAY[NULL]::text[]']) {
      await expect(
        db.pool.query(`UPDATE api_keys SET toolsets = ${bad} WHERE id = 'key_ts'`),
      ).rejects.toThrow(/api_keys_toolsets_check/);
    }
    // The CHECK allows every name of TOOLSETS, and nothing changes what the key had.
    await db.pool.query(`UPDATE api_keys SET toolsets = $1 WHERE id = 'key_ts'`, [[...TOOLSETS]]);
    await db.pool.query(`UPDATE api_keys SET toolsets = '{calendar,rules}' WHERE id = 'key_ts'`);

    const keys = new ApiKeyRepository(p);
    const { key: created } = await keys.create('tnt_ts', {
      name: 'search only',
      toolsets: [' search', 'search'],
    });
    expect(created.toolsets).toEqual(['search']);
    expect((await keys.create('tnt_ts', { name: 'default' })).key.toolsets).toEqual([
      'calendar',
      'booking',
      'search',
    ]);
    const valid = 'the toolsets are calendar, booking, search, rules, scheduler, ics.';
    await expect(
      keys.create('tnt_ts', { name: 'bad', toolsets: ['calendar', 'Booking'] }),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      message: `Unknown toolset 'Booking': ${valid}`,
    });
    expect(await p.apiKey.count({ where: { tenantId: 'tnt_ts' } })).toBe(3);

    const set = await keys.setDefaults('tnt_ts', created.id, { toolsets: ['rules', 'booking', 'calendar'] });
    expect(set.toolsets).toEqual(['calendar', 'booking', 'rules']);
    await expect(keys.setDefaults('tnt_ts', created.id, { toolsets: ['x', 'y', 'x'] })).rejects.toThrow(
      `Unknown toolsets 'x', 'y': ${valid}`,
    );
    await expect(keys.setDefaults('tnt_ts', created.id, { toolsets: [' '] })).rejects.toThrow(
      `Give at least one toolset: ${valid}`,
    );
    const listed = await keys.list('tnt_ts');
    expect(listed.map((k) => k.toolsets)).toEqual([
      ['calendar', 'rules'],
      ['calendar', 'booking', 'rules'],
      ['calendar', 'booking', 'search'],
    ]);
    await p.tenant.delete({ where: { id: 'tnt_ts' } });
  });

  it('project, rule and classification: composite keys inside one tenant, gone with it', async () => {
    const p = db.prisma;
    await tenantWithKey('cls', 'Classify');
    await p.connection.create({
      data: { id: 'con_cls', tenantId: 'tnt_cls', provider: 'local', accountEmail: 'local', auth: 'none' },
    });
    const calendar = await p.calendar.create({
      data: {
        id: 'cal_cls',
        tenantId: 'tnt_cls',
        connectionId: 'con_cls',
        externalId: 'cal_cls',
        summary: 'Work',
        timeZone: 'UTC',
      },
    });
    await p.user.create({ data: { id: 'usr_cls', tenantId: 'tnt_cls', email: 'cls@example.com' } });

    const project = await p.project.create({
      data: { id: 'prj_rt', tenantId: 'tnt_cls', name: 'Acme', client: 'Acme Corp', colour: '#4f46e5' },
    });
    expect(await p.project.findUniqueOrThrow({ where: { id: project.id } })).toEqual(project);
    expect(project.archivedAt).toBeNull();

    const byKey = await p.rule.create({
      data: {
        id: 'rul_rt1',
        tenantId: 'tnt_cls',
        projectId: project.id,
        query: 'domain:acme.com',
        createdByKeyId: 'key_cls',
      },
    });
    expect(byKey).toMatchObject({ weight: 1, enabled: true, createdByUserId: null });
    const byUser = await p.rule.create({
      data: {
        id: 'rul_rt2',
        tenantId: 'tnt_cls',
        projectId: project.id,
        query: 'title:"weekly sync"',
        weight: 3,
        enabled: false,
        createdByUserId: 'usr_cls',
      },
    });
    expect(await p.rule.findUniqueOrThrow({ where: { id: byUser.id } })).toEqual(byUser);
    expect(
      await p.rule.findUniqueOrThrow({
        where: { id: byKey.id },
        select: { project: { select: { name: true } }, createdByKey: { select: { id: true } } },
      }),
    ).toEqual({ project: { name: 'Acme' }, createdByKey: { id: 'key_cls' } });

    const classification = await p.classification.create({
      data: {
        tenantId: 'tnt_cls',
        calendarId: calendar.id,
        eventId: 'abc_20261201T090000Z',
        projectId: project.id,
        source: 'rule',
        confidence: 0.75,
        needsReview: true,
        startAt: new Date('2026-12-01T09:00:00.000Z'),
        endAt: new Date('2026-12-01T10:00:00.000Z'),
        ruleIds: [byKey.id, byUser.id],
      },
    });
    expect(
      await p.classification.findUniqueOrThrow({
        where: {
          tenantId_calendarId_eventId: {
            tenantId: 'tnt_cls',
            calendarId: calendar.id,
            eventId: 'abc_20261201T090000Z',
          },
        },
      }),
    ).toEqual(classification);
    const skipped = await p.classification.create({
      data: {
        tenantId: 'tnt_cls',
        calendarId: calendar.id,
        eventId: 'lunch',
        skip: true,
        source: 'manual',
        confidence: 1,
        startAt: new Date('2026-12-01T12:00:00.000Z'),
        endAt: new Date('2026-12-01T13:00:00.000Z'),
      },
    });
    expect(skipped).toMatchObject({ projectId: null, skip: true, ruleIds: [], needsReview: false });
    expect(
      await p.project.findUniqueOrThrow({
        where: { id: project.id },
        select: { _count: { select: { rules: true, classifications: true } } },
      }),
    ).toEqual({ _count: { rules: 2, classifications: 1 } });

    // Another tenant's rule cannot point at this project, nor its classification at this calendar.
    await p.tenant.create({ data: { id: 'tnt_cls2', name: 'Other' } });
    await expect(
      p.rule.create({ data: { id: 'rul_x', tenantId: 'tnt_cls2', projectId: project.id, query: 'x' } }),
    ).rejects.toThrow();
    await expect(
      p.classification.create({
        data: {
          tenantId: 'tnt_cls2',
          calendarId: calendar.id,
          eventId: 'x',
          skip: true,
          source: 'manual',
          confidence: 1,
          startAt: new Date(),
          endAt: new Date(),
        },
      }),
    ).rejects.toThrow();
    // The project cannot go while rules file into it.
    await expect(p.project.delete({ where: { id: project.id } })).rejects.toThrow();

    await p.tenant.delete({ where: { id: 'tnt_cls' } });
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*) FROM projects)::int + (SELECT count(*) FROM rules)::int
            + (SELECT count(*) FROM classifications)::int AS n`,
    );
    expect(rows[0].n).toBe(0);
  });

  it('delivery target, schedule and delivery: composite keys inside one tenant, gone with it', async () => {
    const p = db.prisma;
    await tenantWithKey('sch', 'Schedules');
    const target = await p.deliveryTarget.create({
      data: {
        id: 'tgt_rt',
        tenantId: 'tnt_sch',
        kind: 'letta',
        name: 'Letta',
        url: 'https://letta.example',
        secretKeyId: 'k_1',
        sealedSecret: new Uint8Array([4, 5, 6]),
        defaultAgentId: 'agent-1',
      },
    });
    expect(await p.deliveryTarget.findUniqueOrThrow({ where: { id: target.id } })).toEqual(target);
    expect(target).toMatchObject({ disabledAt: null, disabledReason: null });

    const spec = { kind: 'cron', cron: '0 9 * * MON-FRI', timeZone: 'Europe/Berlin', maxRepetitions: 3 };
    const schedule = await p.schedule.create({
      data: {
        id: 'sch_rt',
        tenantId: 'tnt_sch',
        keyId: 'key_sch',
        targetId: target.id,
        agentId: 'agent-2',
        prompt: 'Review the day',
        spec,
        nextRunAt: new Date('2026-11-23T08:00:00.000Z'),
      },
    });
    expect(await p.schedule.findUniqueOrThrow({ where: { id: schedule.id } })).toEqual(schedule);
    expect(schedule).toMatchObject({ spec, status: 'active', repetitionsDone: 0, cancelledAt: null });

    const delivery = await p.delivery.create({
      data: {
        tenantId: 'tnt_sch',
        scheduleId: schedule.id,
        occurrenceAt: new Date('2026-11-23T08:00:00.000Z'),
        occurrenceId: 'sch_rt:2026-11-23T08:00:00Z',
        status: 'delivered',
        statusCode: 200,
        deliveredAt: new Date('2026-11-23T08:00:00.400Z'),
      },
    });
    expect(
      await p.delivery.findUniqueOrThrow({ where: { occurrenceId: 'sch_rt:2026-11-23T08:00:00Z' } }),
    ).toEqual(delivery);
    expect(delivery.attempt).toBe(1);
    expect(
      await p.schedule.findUniqueOrThrow({
        where: { id: schedule.id },
        select: {
          target: { select: { name: true } },
          key: { select: { id: true } },
          _count: { select: { deliveries: true } },
        },
      }),
    ).toEqual({ target: { name: 'Letta' }, key: { id: 'key_sch' }, _count: { deliveries: 1 } });

    // Another tenant's schedule cannot use this target or key, nor its delivery this schedule.
    await p.tenant.create({ data: { id: 'tnt_sch2', name: 'Other' } });
    const foreign = { tenantId: 'tnt_sch2', prompt: 'x', spec, nextRunAt: new Date() };
    await expect(
      p.schedule.create({ data: { id: 'sch_x1', keyId: 'key_sch', ...foreign } }),
    ).rejects.toThrow();
    await expect(
      p.delivery.create({
        data: {
          tenantId: 'tnt_sch2',
          scheduleId: schedule.id,
          occurrenceAt: new Date(),
          occurrenceId: 'x',
          status: 'pending',
        },
      }),
    ).rejects.toThrow();
    // The database refuses an active schedule without a next run and an unknown status.
    await expect(
      p.schedule.create({ data: { id: 'sch_x2', tenantId: 'tnt_sch', keyId: 'key_sch', prompt: 'x', spec } }),
    ).rejects.toThrow();
    await expect(
      p.delivery.update({ where: { id: delivery.id }, data: { status: 'lost' } }),
    ).rejects.toThrow();

    await p.tenant.delete({ where: { id: 'tnt_sch' } });
    await p.tenant.delete({ where: { id: 'tnt_sch2' } });
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*) FROM delivery_targets)::int + (SELECT count(*) FROM schedules)::int
            + (SELECT count(*) FROM deliveries)::int AS n`,
    );
    expect(rows[0].n).toBe(0);
  });

  it('action confirmation and the hijack policy of a key (CHECKs hold the names)', async () => {
    const p = db.prisma;
    const key = await tenantWithKey('cf', 'Confirmations');
    expect(key.hijackPolicy).toBe('ask');
    expect(
      (await p.apiKey.update({ where: { id: key.id }, data: { hijackPolicy: 'strict' } })).hijackPolicy,
    ).toBe('strict');
    await expect(
      db.pool.query("UPDATE api_keys SET hijack_policy = 'lax' WHERE id = 'key_cf'"),
    ).rejects.toThrow(/api_keys_hijack_policy_check/);
    const row = await p.actionConfirmation.create({
      data: {
        id: 'cnf_rt',
        tenantId: 'tnt_cf',
        keyId: key.id,
        tool: 'delete_event',
        argsHash: 'h',
        calendarIds: ['cal_1'],
        action: 'delete event e1',
        preceded: ['event e0: description addresses an AI assistant'],
        expiresAt: new Date('2027-01-01T00:00:00.000Z'),
      },
    });
    expect(await p.actionConfirmation.findUniqueOrThrow({ where: { id: row.id } })).toEqual(row);
    expect(row.status).toBe('pending');
    await expect(
      db.pool.query("UPDATE action_confirmations SET status = 'maybe' WHERE id = 'cnf_rt'"),
    ).rejects.toThrow(/action_confirmations_status_check/);
    // A confirmation goes with its key.
    await p.apiKey.delete({ where: { id: key.id } });
    expect(await p.actionConfirmation.count({ where: { id: row.id } })).toBe(0);
  });

  it("the mirror's sync state, tombstones, change feed, cursors, push channels and reads", async () => {
    const p = db.prisma;
    await p.tenant.create({ data: { id: 'tnt_mr', name: 'Mirror' } });
    await p.connection.create({
      data: {
        id: 'con_mr',
        tenantId: 'tnt_mr',
        provider: 'google',
        accountEmail: 'm@example.com',
        auth: 'oauth',
      },
    });
    const calendar = await p.calendar.create({
      data: {
        id: 'cal_mr',
        tenantId: 'tnt_mr',
        connectionId: 'con_mr',
        externalId: 'm@example.com',
        summary: 'M',
        timeZone: 'UTC',
      },
    });
    const at = new Date('2026-12-01T09:00:00.000Z');
    const state = await p.mirrorSyncState.create({
      data: { calendarId: calendar.id, tenantId: 'tnt_mr', syncToken: 'tok', syncedAt: at, pushedAt: at },
    });
    expect(await p.mirrorSyncState.findUniqueOrThrow({ where: { calendarId: calendar.id } })).toEqual(state);
    expect(state).toMatchObject({ status: 'syncing', generation: 1 });

    const tombstone = await p.mirrorTombstone.create({
      data: { calendarId: calendar.id, eventId: 'ev1', tenantId: 'tnt_mr', deletedAt: at },
    });
    expect(
      await p.mirrorTombstone.findUniqueOrThrow({
        where: { calendarId_eventId: { calendarId: calendar.id, eventId: 'ev1' } },
      }),
    ).toEqual(tombstone);

    const change = await p.mirrorChange.create({
      data: { tenantId: 'tnt_mr', calendarId: calendar.id, eventId: 'ev1', kind: 'delete' },
    });
    expect(await p.mirrorChange.findUniqueOrThrow({ where: { id: change.id } })).toEqual(change);
    const cursor = await p.mirrorFeedCursor.create({ data: { consumer: 'models-test', lastId: change.id } });
    expect(await p.mirrorFeedCursor.findUniqueOrThrow({ where: { consumer: 'models-test' } })).toEqual(
      cursor,
    );

    const channel = await p.mirrorChannel.create({
      data: {
        channelId: 'chn_mr',
        tenantId: 'tnt_mr',
        calendarId: calendar.id,
        resourceId: 'res',
        expiration: new Date('2026-12-08T00:00:00.000Z'),
        lastMessageNumber: 3n,
      },
    });
    expect(await p.mirrorChannel.findUniqueOrThrow({ where: { channelId: 'chn_mr' } })).toEqual(channel);
    const read = await p.mirrorRead.create({ data: { calendarId: calendar.id, tenantId: 'tnt_mr' } });
    expect(await p.mirrorRead.findUniqueOrThrow({ where: { calendarId: calendar.id } })).toEqual(read);

    // Everything a mirrored calendar keeps goes with it (foreign keys in the migrations).
    await p.calendar.delete({ where: { id: calendar.id } });
    expect(await p.mirrorSyncState.count({ where: { calendarId: calendar.id } })).toBe(0);
    expect(await p.mirrorTombstone.count({ where: { calendarId: calendar.id } })).toBe(0);
    expect(await p.mirrorChannel.count({ where: { calendarId: calendar.id } })).toBe(0);
  });

  it('oauth client, code and refresh token; invitation, password reset and second factor', async () => {
    const p = db.prisma;
    await tenantWithKey('oa', 'OAuth');
    const user = await p.user.create({
      data: { id: 'usr_oa', tenantId: 'tnt_oa', email: 'oa@example.com', passwordHash: '$argon2id$x' },
    });
    const client = await p.oAuthClient.create({
      data: {
        id: 'ocl_rt',
        clientId: 'https://app.example.com/client.json',
        kind: 'metadata_document',
        clientName: 'App',
        redirectUris: ['https://app.example.com/cb'],
        tokenEndpointAuthMethod: 'none',
        metadata: { logo_uri: 'https://app.example.com/logo.png' },
      },
    });
    expect(await p.oAuthClient.findUniqueOrThrow({ where: { id: client.id } })).toEqual(client);
    const expiresAt = new Date('2027-01-01T00:00:00.000Z');
    const code = await p.oAuthCode.create({
      data: {
        hash: new Uint8Array(32).fill(1),
        tenantId: 'tnt_oa',
        keyId: 'key_oa',
        clientId: client.id,
        redirectUri: 'https://app.example.com/cb',
        codeChallenge: 'c'.repeat(43),
        resource: 'https://calgate.example.com/api/mcp',
        expiresAt,
      },
    });
    expect(await p.oAuthCode.findUniqueOrThrow({ where: { hash: code.hash } })).toEqual(code);
    const token = await p.oAuthRefreshToken.create({
      data: {
        hash: new Uint8Array(32).fill(2),
        familyId: 'fam_1',
        tenantId: 'tnt_oa',
        keyId: 'key_oa',
        clientId: client.id,
        resource: 'https://calgate.example.com/api/mcp',
        expiresAt,
      },
    });
    expect(await p.oAuthRefreshToken.findUniqueOrThrow({ where: { hash: token.hash } })).toEqual(token);
    // Codes and tokens go with their client.
    await p.oAuthClient.delete({ where: { id: client.id } });
    expect(await p.oAuthCode.count({ where: { clientId: client.id } })).toBe(0);
    expect(await p.oAuthRefreshToken.count({ where: { clientId: client.id } })).toBe(0);

    const invitation = await p.invitation.create({
      data: {
        id: 'inv_rt',
        tenantId: 'tnt_oa',
        email: 'new@example.com',
        role: 'member',
        tokenHash: new Uint8Array(32).fill(3),
        expiresAt,
      },
    });
    expect(await p.invitation.findUniqueOrThrow({ where: { id: invitation.id } })).toEqual(invitation);
    const reset = await p.passwordReset.create({
      data: { tokenHash: new Uint8Array(32).fill(4), userId: user.id, expiresAt },
    });
    expect(await p.passwordReset.findUniqueOrThrow({ where: { tokenHash: reset.tokenHash } })).toEqual(reset);
    const totp = await p.userTotp.create({
      data: {
        userId: user.id,
        tenantId: 'tnt_oa',
        secret: new Uint8Array([5, 6, 7]),
        secretKeyId: 'k_1',
        lastUsedStep: 59_000_000n,
        recoveryCodeHashes: ['h1', 'h2'],
      },
    });
    expect(await p.userTotp.findUniqueOrThrow({ where: { userId: user.id } })).toEqual(totp);
  });

  it('every model of schema.prisma is written and read back in this file', () => {
    const schema = readFileSync(new URL('../../../prisma/schema.prisma', import.meta.url), 'utf8');
    const source = readFileSync(new URL(import.meta.url), 'utf8');
    const models = [...schema.matchAll(/^model (\w+) \{/gm)].map((match) => match[1] as string);
    expect(models.length).toBeGreaterThan(20);
    // Booking's `during` is a tstzrange Prisma cannot write: bookings are written with SQL
    // (packages/store/src/bookings.ts) and round-trip in packages/store/test/bookings.test.ts.
    const untested = models.filter((model) => {
      if (model === 'Booking') {
        return false;
      }
      const client = model.charAt(0).toLowerCase() + model.slice(1);
      return !source.includes(`p.${client}.create(`);
    });
    expect(untested).toEqual([]);
  });
});
