import { CalgateError, canonicalTimeZone } from '@calgate/core';
import {
  ApiKeyRepository,
  ConnectionRepository,
  type Database,
  DeliveryTargetRepository,
  HIJACK_POLICIES,
  migrate,
  TenancyRepository,
  TotpRepository,
} from '@calgate/store';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { connectDatabase, loadSecretBox } from '../runtime.ts';
import {
  type Io,
  print,
  required,
  resolveTenant,
  toolsetsOption,
  UsageError,
  type Values,
  validTimeZone,
} from './common.ts';
import { connectCommand } from './connect.ts';
import { peopleCommand } from './people.ts';
import { targetCommand } from './targets.ts';

export async function adminCommand(
  config: Config,
  log: Logger,
  io: Io,
  words: string[],
  values: Values,
): Promise<void> {
  const database = await connectDatabase(config, log);
  try {
    if (database.embedded) {
      await migrate(database.db.pool);
    }
    await runAdmin(database.db, config, database.embedded, io, words, values);
  } finally {
    await database.close();
  }
}

async function runAdmin(
  db: Database,
  config: Config,
  embedded: boolean,
  io: Io,
  words: string[],
  values: Values,
): Promise<void> {
  const tenancy = new TenancyRepository(db.prisma);
  const keys = new ApiKeyRepository(db.prisma);
  const command = words.join(' ');
  switch (command) {
    case 'migrate': {
      const report = await migrate(db.pool);
      print(
        io,
        values.json,
        report,
        report.applied.length > 0 ? `Applied: ${report.applied.join(', ')}` : 'Database is up to date.',
      );
      return;
    }
    case 'tenant create': {
      if (values['owner-email'] !== undefined) {
        await peopleCommand(db, config, io, command, values);
        return;
      }
      const tenant = await tenancy.createTenant(required(values, 'name'));
      print(
        io,
        values.json,
        { id: tenant.id, name: tenant.name },
        `Created tenant ${tenant.id} (${tenant.name}).`,
      );
      return;
    }
    case 'tenant list': {
      const tenants = await tenancy.listTenants();
      print(
        io,
        values.json,
        tenants,
        tenants.map((t) => `${t.id}  ${t.name}  time zone ${t.timeZone ?? 'not set'}`).join('\n') ||
          'No tenants.',
      );
      return;
    }
    case 'tenant set': {
      const tenantId = await resolveTenant(tenancy, values);
      const name = values.name?.trim();
      const zone = values['time-zone']?.trim();
      if (name === undefined && zone === undefined) {
        throw new UsageError('Pass --name and/or --time-zone (an IANA zone, or none to clear it).');
      }
      if (name === '' || zone === '') {
        throw new UsageError(
          name === '' ? '--name needs a name.' : '--time-zone needs an IANA zone (or none).',
        );
      }
      const canonical = zone === undefined || zone === 'none' ? undefined : canonicalTimeZone(zone);
      if (canonical !== undefined && !canonical.ok) {
        throw new UsageError(`--time-zone '${zone}' is not an IANA time zone (e.g. Europe/Berlin, UTC).`);
      }
      // Keys read the zone with their grants: gateways see it once their key cache expires (≤ 5 s).
      const tenant = await tenancy.updateTenant(tenantId, {
        ...(name === undefined ? {} : { name }),
        ...(zone === undefined ? {} : { timeZone: canonical === undefined ? null : canonical.value }),
      });
      if (tenant === null) {
        throw new CalgateError('not_found', `No tenant ${tenantId}.`);
      }
      print(
        io,
        values.json,
        { id: tenant.id, name: tenant.name, timeZone: tenant.timeZone },
        `Tenant ${tenant.id} (${tenant.name}): time zone ${tenant.timeZone ?? 'not set (each key’s default calendar’s)'}.`,
      );
      return;
    }
    case 'key create': {
      const tenantId = await resolveTenant(tenancy, values);
      let expiresAt: Date | undefined;
      if (values.expires !== undefined) {
        expiresAt = new Date(values.expires);
        if (Number.isNaN(expiresAt.getTime()) || expiresAt.getTime() <= Date.now()) {
          throw new UsageError('--expires must be a future date-time, e.g. 2027-01-01T00:00:00Z.');
        }
      }
      const toolsets = toolsetsOption(values);
      const { key, secret } = await keys.create(tenantId, {
        name: required(values, 'name'),
        expiresAt: expiresAt ?? null,
        toolsets,
      });
      print(
        io,
        values.json,
        { id: key.id, secret },
        `Created API key ${key.id} (toolsets ${key.toolsets.join(',')}).\nSecret (shown only now): ${secret}\nGrant it calendars with: calgate grant --key ${key.id} --calendar <id> --read [--write]`,
      );
      return;
    }
    case 'key list': {
      const tenantId = await resolveTenant(tenancy, values);
      const list = await keys.list(tenantId);
      print(
        io,
        values.json,
        list,
        list
          .map(
            (k) =>
              `${k.id}  ${k.prefix}…  ${k.name}  created ${k.createdAt.toISOString()}  last used ${k.lastUsedAt?.toISOString() ?? 'never'}${k.revokedAt ? '  REVOKED' : ''}${k.expiresAt ? `  expires ${k.expiresAt.toISOString()}` : ''}  default calendar ${k.defaultCalendarId ?? 'automatic'}  time zone ${k.timeZone ?? "the workspace's"}  toolsets ${k.toolsets.join(',')}  hijack policy ${k.hijackPolicy}`,
          )
          .join('\n') || 'No API keys.',
      );
      return;
    }
    case 'key set': {
      const tenantId = await resolveTenant(tenancy, values);
      const keyId = required(values, 'key');
      const calendar = values['default-calendar']?.trim();
      const zone = values['time-zone']?.trim();
      const toolsets = toolsetsOption(values);
      const agent = values['default-agent']?.trim();
      const hijackPolicy = values['hijack-policy']?.trim();
      if (
        calendar === undefined &&
        zone === undefined &&
        toolsets === undefined &&
        agent === undefined &&
        hijackPolicy === undefined
      ) {
        throw new UsageError(
          'Pass --default-calendar, --time-zone and/or --default-agent (none clears one), --toolsets and/or --hijack-policy.',
        );
      }
      if (hijackPolicy !== undefined && !(HIJACK_POLICIES as readonly string[]).includes(hijackPolicy)) {
        throw new UsageError(`--hijack-policy: use one of ${HIJACK_POLICIES.join(', ')}.`);
      }
      if (calendar === '' || zone === '' || agent === '') {
        throw new UsageError(
          calendar === ''
            ? '--default-calendar needs a calendar id (or none).'
            : zone === ''
              ? '--time-zone needs an IANA zone (or none).'
              : '--default-agent needs an agent id (or none).',
        );
      }
      // "none" puts the setting back to Calgate's choice.
      const clearable = (value: string | undefined) => (value === 'none' ? null : value);
      const key = await keys.setDefaults(tenantId, keyId, {
        defaultCalendarId: clearable(calendar),
        timeZone: clearable(zone),
        toolsets,
        defaultAgentId: clearable(agent),
        hijackPolicy,
      });
      print(
        io,
        values.json,
        {
          id: key.id,
          defaultCalendarId: key.defaultCalendarId,
          timeZone: key.timeZone,
          toolsets: key.toolsets,
          defaultAgentId: key.defaultAgentId,
          hijackPolicy: key.hijackPolicy,
        },
        `Key ${key.id}: default calendar ${key.defaultCalendarId ?? 'automatic'}, time zone ${key.timeZone ?? "the workspace's"}, toolsets ${key.toolsets.join(',')}${key.defaultAgentId === null ? '' : `, default agent ${key.defaultAgentId}`}, hijack policy ${key.hijackPolicy}.`,
      );
      return;
    }
    case 'key revoke': {
      const tenantId = await resolveTenant(tenancy, values);
      const keyId = required(values, 'key');
      if (!(await keys.revoke(tenantId, keyId))) {
        throw new CalgateError('not_found', `No API key ${keyId} in this tenant.`);
      }
      print(
        io,
        values.json,
        { id: keyId, revoked: true },
        `Revoked ${keyId}. It stops working within seconds.`,
      );
      return;
    }
    case 'calendar create': {
      const tenantId = await resolveTenant(tenancy, values);
      // Unnamed: the workspace's zone, else this machine's.
      const workspace = (await tenancy.getTenant(tenantId))?.timeZone ?? undefined;
      const timeZone =
        values['time-zone'] ?? workspace ?? (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
      if (!validTimeZone(timeZone)) {
        throw new UsageError(`--time-zone '${timeZone}' is not an IANA time zone (e.g. Europe/Berlin).`);
      }
      const calendar = await tenancy.createLocalCalendar(tenantId, {
        summary: required(values, 'name'),
        timeZone,
      });
      print(
        io,
        values.json,
        { id: calendar.id, summary: calendar.summary, timeZone: calendar.timeZone },
        `Created local calendar ${calendar.id} (${calendar.summary}, ${calendar.timeZone}).`,
      );
      return;
    }
    case 'calendar list': {
      const tenantId = await resolveTenant(tenancy, values);
      const list = await tenancy.listCalendars(tenantId);
      print(
        io,
        values.json,
        list,
        list.map((c) => `${c.id}  ${c.summary}  ${c.timeZone}${c.enabled ? '' : '  DISABLED'}`).join('\n') ||
          'No calendars.',
      );
      return;
    }
    case 'grant': {
      const tenantId = await resolveTenant(tenancy, values);
      if (!values.read && !values.write) {
        throw new UsageError('Pass --read and/or --write (use revoke-grant to remove access).');
      }
      const grant = await tenancy.setGrant(tenantId, required(values, 'key'), required(values, 'calendar'), {
        read: values.read ?? false,
        write: values.write ?? false,
      });
      print(
        io,
        values.json,
        { key: values.key, calendar: values.calendar, ...grant },
        `Key ${values.key} may now ${grant.canWrite ? 'read and write' : 'read'} calendar ${values.calendar}.`,
      );
      return;
    }
    case 'revoke-grant': {
      const tenantId = await resolveTenant(tenancy, values);
      const removed = await tenancy.revokeGrant(
        tenantId,
        required(values, 'key'),
        required(values, 'calendar'),
      );
      print(
        io,
        values.json,
        { key: values.key, calendar: values.calendar, removed },
        removed ? `Removed the grant of ${values.key} on ${values.calendar}.` : 'There was no such grant.',
      );
      return;
    }
    case 'secrets reseal': {
      const box = await loadSecretBox(config, embedded);
      const credentials = await new ConnectionRepository(db.prisma, box).resealAll();
      const targets = await new DeliveryTargetRepository(db, box).resealAll();
      const totp = await new TotpRepository(db, box).resealAll();
      const report = {
        resealed: credentials.resealed + targets.resealed + totp.resealed,
        unreadable: [...credentials.unreadable, ...targets.unreadable, ...totp.unreadable],
      };
      print(
        io,
        values.json,
        report,
        `Re-sealed ${report.resealed} credential(s).${report.unreadable.length > 0 ? ` Could not open: ${report.unreadable.join(', ')}` : ''}`,
      );
      return;
    }
    case 'connect google':
    case 'connect google-service-account':
    case 'connect microsoft':
    case 'connect caldav':
    case 'connect ics':
      await connectCommand(db, config, embedded, io, command, values);
      return;
    case 'target create':
    case 'target list':
    case 'target delete':
    case 'target test':
      await targetCommand(db, config, embedded, io, command, values);
      return;
    case 'user reset-password':
      await peopleCommand(db, config, io, command, values);
      return;
    default:
      throw new UsageError(`Unknown command '${command}'.`);
  }
}
