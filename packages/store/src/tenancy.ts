import { CalgateError, newId } from '@calgate/core';
import type { Prisma } from './db.ts';

export interface CalendarRecord {
  id: string;
  tenantId: string;
  connectionId: string;
  externalId: string;
  summary: string;
  description: string | null;
  timeZone: string;
  primary: boolean;
  enabled: boolean;
  accessRole: string;
}

/** A workspace: its name and the time zone keys without their own zone answer in. */
export interface TenantRecord {
  id: string;
  name: string;
  /** IANA zone; null: unset (keys fall back to their default calendar's zone). */
  timeZone: string | null;
  createdAt: Date;
}

export const LOCAL_ACCOUNT = 'local';

/** A calendar as an upstream account reports it. */
export interface DiscoveredCalendar {
  externalId: string;
  summary: string;
  description?: string;
  timeZone: string;
  primary: boolean;
  accessRole: string;
}

/** Tenants, local calendars and grants: the rows behind the permission matrix. */
export class TenancyRepository {
  readonly #prisma: Prisma;

  constructor(prisma: Prisma) {
    this.#prisma = prisma;
  }

  createTenant(name: string): Promise<TenantRecord> {
    return this.#prisma.tenant.create({ data: { id: newId('tnt'), name } });
  }

  getTenant(id: string): Promise<TenantRecord | null> {
    return this.#prisma.tenant.findUnique({ where: { id } });
  }

  listTenants(): Promise<TenantRecord[]> {
    return this.#prisma.tenant.findMany({ orderBy: { createdAt: 'asc' } });
  }

  /**
   * Sets the workspace's name and/or time zone (null: unset). Keys read the zone with their
   * access, so callers forget cached key lookups after this. Null when there is no such tenant.
   */
  async updateTenant(
    id: string,
    patch: { name?: string; timeZone?: string | null },
  ): Promise<TenantRecord | null> {
    const { count } = await this.#prisma.tenant.updateMany({ where: { id }, data: patch });
    return count === 0 ? null : this.getTenant(id);
  }

  /** A calendar kept by Calgate itself, on the tenant's one `local` connection (created on demand). */
  async createLocalCalendar(
    tenantId: string,
    input: { summary: string; timeZone: string; description?: string },
  ): Promise<CalendarRecord> {
    const connection = await this.#prisma.connection.upsert({
      where: {
        tenantId_provider_accountEmail: { tenantId, provider: 'local', accountEmail: LOCAL_ACCOUNT },
      },
      update: {},
      create: { id: newId('con'), tenantId, provider: 'local', accountEmail: LOCAL_ACCOUNT, auth: 'none' },
    });
    const existing = await this.#prisma.calendar.count({ where: { connectionId: connection.id } });
    const id = newId('cal');
    return this.#prisma.calendar.create({
      data: {
        id,
        tenantId,
        connectionId: connection.id,
        externalId: id,
        summary: input.summary,
        description: input.description ?? null,
        timeZone: input.timeZone,
        primary: existing === 0,
      },
    });
  }

  /**
   * Records the calendars discovered on a connection: new ones are added, known ones refreshed
   * (name, zone, role). Returns the ids of the calendars that are new.
   */
  async syncCalendars(
    tenantId: string,
    connectionId: string,
    discovered: readonly DiscoveredCalendar[],
  ): Promise<{ created: string[]; calendars: CalendarRecord[] }> {
    const existing = await this.#prisma.calendar.findMany({ where: { tenantId, connectionId } });
    const byExternal = new Map(existing.map((calendar) => [calendar.externalId, calendar]));
    const created: string[] = [];
    const calendars: CalendarRecord[] = [];
    for (const info of discovered) {
      const known = byExternal.get(info.externalId);
      const fields = {
        summary: info.summary,
        description: info.description ?? null,
        timeZone: info.timeZone,
        primary: info.primary,
        accessRole: info.accessRole,
      };
      if (known === undefined) {
        const calendar = await this.#prisma.calendar.create({
          data: { id: newId('cal'), tenantId, connectionId, externalId: info.externalId, ...fields },
        });
        created.push(calendar.id);
        calendars.push(calendar);
      } else {
        calendars.push(await this.#prisma.calendar.update({ where: { id: known.id }, data: fields }));
      }
    }
    return { created, calendars };
  }

  /**
   * Grants the given keys (all the tenant's live keys when `keyIds` is empty) read, or read and
   * write, on calendars. Write is only given where the account itself may write.
   */
  async grantCalendars(
    tenantId: string,
    calendars: readonly CalendarRecord[],
    access: 'read' | 'write',
    keyIds: readonly string[] = [],
  ): Promise<void> {
    // An OAuth connection keeps exactly the calendars its user approved: it is never swept in.
    const keys = await this.#prisma.apiKey.findMany({
      where: {
        tenantId,
        revokedAt: null,
        ...(keyIds.length > 0 ? { id: { in: [...keyIds] } } : { kind: 'key' }),
      },
      select: { id: true },
    });
    for (const key of keys) {
      for (const calendar of calendars) {
        const writable =
          access === 'write' && (calendar.accessRole === 'owner' || calendar.accessRole === 'writer');
        await this.setGrant(tenantId, key.id, calendar.id, { read: true, write: writable });
      }
    }
  }

  listCalendars(tenantId: string): Promise<CalendarRecord[]> {
    return this.#prisma.calendar.findMany({
      where: { tenantId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  /**
   * Sets what a key may do on a calendar. Write implies read; both false removes the grant.
   * Ids of another tenant are reported as not found.
   */
  async setGrant(
    tenantId: string,
    keyId: string,
    calendarId: string,
    grant: { read: boolean; write: boolean },
  ): Promise<{ canRead: boolean; canWrite: boolean }> {
    const canWrite = grant.write;
    const canRead = grant.read || grant.write;
    const [key, calendar] = await Promise.all([
      this.#prisma.apiKey.findFirst({ where: { id: keyId, tenantId }, select: { id: true } }),
      this.#prisma.calendar.findFirst({ where: { id: calendarId, tenantId }, select: { id: true } }),
    ]);
    if (key === null) {
      throw new CalgateError('not_found', `No API key ${keyId} in this tenant.`);
    }
    if (calendar === null) {
      throw new CalgateError('not_found', `No calendar ${calendarId} in this tenant.`);
    }
    if (!canRead) {
      await this.#prisma.grant.deleteMany({ where: { tenantId, keyId, calendarId } });
      return { canRead: false, canWrite: false };
    }
    await this.#prisma.grant.upsert({
      where: { keyId_calendarId: { keyId, calendarId } },
      update: { canRead, canWrite },
      create: { tenantId, keyId, calendarId, canRead, canWrite },
    });
    return { canRead, canWrite };
  }

  /** Removes a key's grant on a calendar; false when there was none. */
  async revokeGrant(tenantId: string, keyId: string, calendarId: string): Promise<boolean> {
    const { count } = await this.#prisma.grant.deleteMany({ where: { tenantId, keyId, calendarId } });
    return count > 0;
  }

  listGrants(tenantId: string, keyId?: string) {
    return this.#prisma.grant.findMany({
      where: { tenantId, ...(keyId === undefined ? {} : { keyId }) },
      select: { keyId: true, calendarId: true, canRead: true, canWrite: true },
      orderBy: [{ keyId: 'asc' }, { calendarId: 'asc' }],
    });
  }
}
