/**
 * The calendars' providers from configuration: Calgate's own store, Google, Outlook, CalDAV and
 * subscribed feeds per connection, read through their mirrors when MIRROR_READS is on.
 */
import { readFile } from 'node:fs/promises';
import {
  type CalendarProvider,
  DEFAULT_GOOGLE_ENDPOINTS,
  LocalCalendarProvider,
  type MailboxLimits,
  MirroredCalendarProvider,
  type MirrorVersionWatch,
  type ServiceAccountKey,
} from '@calgate/providers';
import {
  type ConnectionRepository,
  type Database,
  LocalEventStore,
  MirrorRepository,
  TenancyRepository,
} from '@calgate/store';
import type { ProviderResolver } from '@calgate/tools';
import type { Logger } from 'pino';
import { CaldavAccounts } from '../caldav/accounts.ts';
import { type Config, ConfigError } from '../config.ts';
import { GoogleProviders, type GoogleSetup } from '../google/providers.ts';
import { googleSyncSources } from '../google/sync-sources.ts';
import { IcsSubscriptions } from '../ics/subscriptions.ts';
import { microsoftSetup } from '../microsoft/connect.ts';
import { MicrosoftProviders } from '../microsoft/providers.ts';
import type { MirrorJobs } from '../mirror/jobs.ts';
import { mirrorReadDeps } from '../mirror/reads.ts';
import { SyncSources } from '../mirror/sources.ts';

/** Google's client, service account and endpoints from configuration. */
export async function googleSetup(config: Config): Promise<GoogleSetup> {
  const endpoints = {
    apiRootUrl: config.google.apiRootUrl ?? DEFAULT_GOOGLE_ENDPOINTS.apiRootUrl,
    oauthUrl: config.google.oauthUrl ?? DEFAULT_GOOGLE_ENDPOINTS.oauthUrl,
  };
  const { clientId, clientSecret, serviceAccountKeyFile } = config.google;
  const client =
    clientId !== undefined && clientSecret !== undefined
      ? { clientId, clientSecret, redirectUri: `${config.publicUrl}/oauth/google/callback`, endpoints }
      : undefined;
  let serviceAccount: ServiceAccountKey | undefined;
  if (serviceAccountKeyFile !== undefined) {
    const key = JSON.parse(await readFile(serviceAccountKeyFile, 'utf8')) as Partial<ServiceAccountKey>;
    if (typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
      throw new ConfigError(
        `GOOGLE_SERVICE_ACCOUNT_KEY_FILE ${serviceAccountKeyFile} is not a service-account key (client_email, private_key).`,
      );
    }
    serviceAccount = {
      client_email: key.client_email,
      private_key: key.private_key,
      ...(key.private_key_id ? { private_key_id: key.private_key_id } : {}),
    };
  }
  return { client, serviceAccount, endpoints };
}

/**
 * The calendars' providers: Calgate's own store, and Google per connection (through its mirror),
 * with the mirror's sync sources (one per provider it keeps).
 */
export async function calendarProviders(
  config: Config,
  db: Database,
  connections: ConnectionRepository,
  log: Logger,
  /** Drops the cached key lookups of a tenant one of whose accounts was marked needs_reauth. */
  invalidate: (tenantId: string) => void,
  /** Given, Google calendars are read from their mirrors (MIRROR_READS) and first syncs queued here. */
  mirrorJobs?: MirrorJobs,
  /** Announcements of changed mirror state this process hears (free/busy then skips re-reading sync states). */
  versions?: MirrorVersionWatch,
  /** Outlook mailboxes' Graph limits (mailbox-limits.ts); default: this process's own. */
  mailboxes?: MailboxLimits,
): Promise<{
  googleProviders: GoogleProviders;
  microsoftProviders: MicrosoftProviders;
  caldav: CaldavAccounts;
  providers: ProviderResolver;
  sources: SyncSources;
}> {
  const local = new LocalCalendarProvider(new LocalEventStore(db));
  const googleProviders = new GoogleProviders(await googleSetup(config), connections, log, invalidate);
  const microsoftProviders = new MicrosoftProviders(
    microsoftSetup(config),
    connections,
    log,
    invalidate,
    new TenancyRepository(db.prisma),
    mailboxes,
  );
  const caldav = new CaldavAccounts(connections, config.scheduler.allowPrivateTargets, log, invalidate);
  const feeds = new IcsSubscriptions(
    connections,
    config.scheduler.allowPrivateTargets,
    config.mirror.icsRefreshMs,
  );
  // Each connection's upstream by its provider: Outlook calendars through Graph, CalDAV servers,
  // subscribed feeds, else Google.
  const google: ProviderResolver = (calendar, tenantId) =>
    calendar.provider === 'microsoft'
      ? microsoftProviders.forConnection(tenantId, calendar.connectionId, calendar.accountEmail)
      : calendar.provider === 'caldav'
        ? caldav.forConnection(tenantId, calendar.connectionId, calendar.accountEmail)
        : calendar.provider === 'ics'
          ? feeds.forConnection(tenantId, calendar.connectionId)
          : googleProviders.forConnection(
              tenantId,
              calendar.connectionId,
              calendar.auth,
              calendar.accountEmail,
            );
  const sources = new SyncSources([
    microsoftProviders.syncSources({ pageSize: config.mirror.pageSize }),
    googleSyncSources(
      googleProviders.setup,
      connections,
      ({ tenantId, connectionId }, reason) => {
        log.warn({ connectionId, reason }, 'Google account needs to be reconnected');
        googleProviders.forget(connectionId);
        invalidate(tenantId);
      },
      { pageSize: config.mirror.pageSize },
    ),
    caldav.syncSources(db),
    feeds.syncSources(db),
  ]);
  if (mirrorJobs === undefined || !config.mirror.reads) {
    return {
      googleProviders,
      microsoftProviders,
      caldav,
      providers: (calendar, tenantId) => (calendar.provider === 'local' ? local : google(calendar, tenantId)),
      sources,
    };
  }
  const mirror = new MirrorRepository(db);
  const reads = new Map(
    sources.providers.map((provider) => [
      provider,
      mirrorReadDeps({
        db,
        mirror,
        sources,
        provider,
        jobs: mirrorJobs,
        log,
        maxStalenessMs: config.mirror.maxStalenessMs,
        versions,
      }),
    ]),
  );
  // One wrapper per upstream provider (which is cached per connection).
  const mirrored = new WeakMap<CalendarProvider, MirroredCalendarProvider>();
  const providers: ProviderResolver = (calendar, tenantId) => {
    if (calendar.provider === 'local') {
      return local;
    }
    const upstream = google(calendar, tenantId);
    const format = sources.get(calendar.provider)?.format;
    const deps = reads.get(calendar.provider);
    if (calendar.auth === 'none' || format === undefined || deps === undefined) {
      return upstream;
    }
    let provider = mirrored.get(upstream);
    if (provider === undefined) {
      provider = new MirroredCalendarProvider(
        upstream,
        format,
        { tenantId, connectionId: calendar.connectionId, auth: calendar.auth },
        deps,
      );
      mirrored.set(upstream, provider);
    }
    return provider;
  };
  return { googleProviders, microsoftProviders, caldav, providers, sources };
}
