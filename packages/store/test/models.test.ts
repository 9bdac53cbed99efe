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

  it('tenant, user, api key (with its defaults), connection, calendar, grant, audit entry, local event', async () => {
    const p = db.prisma;
    const tenant = await p.tenant.create({ data: { id: 'tnt_rt', name: 'Round Trip' } });
    expect(await p.tenant.findUniqueOrThrow({ where: { id: tenant.id } })).toEqual(tenant);

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
        etag: '"1"',
      },
    });
    expect(
      await p.localEvent.findUniqueOrThrow({
        where: { calendarId_id: { calendarId: calendar.id, id: event.id } },
      }),
    ).toEqual(event);
  });

  it('enforces the constraints the model relies on', async () => {
    const p = db.prisma;
    await p.tenant.create({ data: { id: 'tnt_other', name: 'Other' } });
    await p.apiKey.create({
      data: {
        id: 'key_other',
        tenantId: 'tnt_other',
        name: 'x',
        prefix: 'cg_live_zzzz',
        hash: new Uint8Array(32),
      },
    });
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
});
