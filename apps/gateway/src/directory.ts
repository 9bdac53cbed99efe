import { CalgateError } from '@calgate/core';
import type { TenancyRepository } from '@calgate/store';
import type { CalendarAccess, CalendarDirectory, KeyCalendar } from '@calgate/tools';
import type { GoogleProviders } from './google/providers.ts';
import type { MicrosoftProviders } from './microsoft/providers.ts';

export interface DirectoryDeps {
  tenancy: TenancyRepository;
  google: GoogleProviders;
  /** Outlook accounts' providers; absent, calendars are not created on Outlook accounts. */
  microsoft?: MicrosoftProviders;
  /** Drops the tenant's cached key lookups so the next call sees the new calendar and grant. */
  invalidate: (tenantId: string) => void;
}

/** A calendar directory for one request, acting for the key behind `access`. */
export type DirectoryFactory = (access: CalendarAccess) => CalendarDirectory;

const SERVICE_ACCOUNT =
  'Google does not let a service account create calendars on a person’s account, so create_calendar needs an account connected through OAuth (or a local calendar). Create the calendar in Google Calendar, share it with {email} ("Make changes to events"), then add it in the Calgate dashboard.';

/** The account a new calendar goes to: that of `onAccountOf`, or the key's first that can create one. */
function chooseAccount(calendars: readonly KeyCalendar[], onAccountOf: string | undefined): KeyCalendar {
  // A subscribed feed is never written, whatever its grant, so no calendar is made beside it.
  const writable = calendars.filter(
    (calendar) => calendar.canWrite && calendar.enabled && calendar.provider !== 'ics',
  );
  const chosen =
    onAccountOf === undefined
      ? (writable.find((calendar) => calendar.auth !== 'service_account') ?? writable[0])
      : writable.find((calendar) => calendar.id === onAccountOf);
  if (chosen === undefined) {
    throw new CalgateError(
      'permission_denied',
      onAccountOf === undefined
        ? 'This API key cannot write to any calendar, so it cannot create one.'
        : `This API key may not write calendar '${onAccountOf}'.`,
    );
  }
  if (chosen.auth === 'password') {
    throw new CalgateError(
      'permission_denied',
      `create_calendar cannot make calendars on the CalDAV account ${chosen.accountEmail}; make the calendar on the server, then run calgate connect caldav again to add it.`,
      { context: { calendarId: chosen.id } },
    );
  }
  if (chosen.auth === 'service_account') {
    throw new CalgateError('permission_denied', SERVICE_ACCOUNT.replace('{email}', chosen.accountEmail), {
      context: { calendarId: chosen.id, authKind: 'service_account' },
    });
  }
  return chosen;
}

function microsoftProvider(deps: DirectoryDeps, tenantId: string, account: KeyCalendar) {
  if (deps.microsoft === undefined) {
    throw new CalgateError('unavailable', 'Calendars cannot be created on Outlook accounts here.');
  }
  return deps.microsoft.forConnection(tenantId, account.connectionId, account.accountEmail);
}

/**
 * Creates calendars for the calling key: locally in Calgate's store, or on a Google account
 * or Outlook account connected through OAuth; the key gets read and write on the new calendar either way.
 */
export function calendarDirectory(deps: DirectoryDeps): DirectoryFactory {
  return (access) => ({
    async createCalendar(input) {
      const { tenantId, keyId, calendars } = access.principal;
      const account = chooseAccount(calendars, input.onAccountOf);
      const timeZone = input.timeZone ?? account.timeZone;
      const description = input.description === undefined ? {} : { description: input.description };
      let record: { id: string; externalId: string; summary: string; timeZone: string };
      if (account.provider === 'local') {
        record = await deps.tenancy.createLocalCalendar(tenantId, {
          summary: input.summary,
          timeZone,
          ...description,
        });
      } else {
        const info =
          account.provider === 'microsoft'
            ? await microsoftProvider(deps, tenantId, account).createCalendar({
                summary: input.summary,
                timeZone,
                ...description,
              })
            : await deps.google
                .forConnection(tenantId, account.connectionId, account.auth)
                .createCalendar({ summary: input.summary, timeZone, ...description });
        const synced = await deps.tenancy.syncCalendars(tenantId, account.connectionId, [info]);
        const [created] = synced.calendars;
        if (created === undefined) {
          throw new CalgateError('internal', 'The new calendar could not be recorded.');
        }
        record = created;
      }
      await deps.tenancy.setGrant(tenantId, keyId, record.id, { read: true, write: true });
      deps.invalidate(tenantId);
      return {
        id: record.id,
        externalId: record.externalId,
        summary: record.summary,
        timeZone: record.timeZone,
        primary: false,
        enabled: true,
        accessRole: 'owner',
        connectionId: account.connectionId,
        provider: account.provider,
        auth: account.auth,
        accountEmail: account.accountEmail,
        connectionStatus: 'active',
        canRead: true,
        canWrite: true,
      };
    },
  });
}
