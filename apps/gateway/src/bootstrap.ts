import { FIRST_RUN_CALENDAR } from '@calgate/store';
import { clientConfigurations, KEY_PLACEHOLDER } from './client-configs.ts';
import type { Runtime } from './runtime.ts';

export interface FirstRun {
  tenantId: string;
  calendarId: string;
  keyId: string;
  secret: string;
  /** The first-run calendar's zone until the dashboard's first-run form sets the workspace's. */
  timeZone: string;
}

/**
 * The first key's toolsets: a new key's defaults plus `rules`, so a person trying Calgate can ask
 * for time per project (get_time_summary) at once; the scheduler stays off until chosen.
 */
export const FIRST_RUN_TOOLSETS = ['calendar', 'booking', 'search', 'rules'] as const;

/**
 * The zone of the machine Calgate first starts on, for its first local calendar (UTC on most
 * servers): the dashboard's first-run form moves the calendar to the owner's zone.
 */
function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/**
 * On an empty database: a tenant, a local calendar and an API key with read and write on it, so
 * an agent can connect at once. Returns undefined when Calgate already has a tenant.
 */
export async function bootstrapFirstRun(runtime: Runtime): Promise<FirstRun | undefined> {
  const tenants = await runtime.tenancy.listTenants();
  if (tenants.length > 0) {
    return undefined;
  }
  const tenant = await runtime.tenancy.createTenant('My Calgate');
  const timeZone = systemTimeZone();
  const calendar = await runtime.tenancy.createLocalCalendar(tenant.id, {
    summary: FIRST_RUN_CALENDAR,
    timeZone,
  });
  const { key, secret } = await runtime.keys.create(tenant.id, {
    name: 'first key',
    toolsets: FIRST_RUN_TOOLSETS,
  });
  await runtime.tenancy.setGrant(tenant.id, key.id, calendar.id, { read: true, write: true });
  return { tenantId: tenant.id, calendarId: calendar.id, keyId: key.id, secret, timeZone };
}

export function welcomeText(mcpUrl: string, firstRun: FirstRun | undefined): string {
  if (firstRun === undefined) {
    return [
      '',
      `Calgate is running. MCP endpoint: ${mcpUrl}`,
      'API keys are shown only when created; make another with: npm run calgate -- key create --name <name>',
      '',
    ].join('\n');
  }
  return [
    '',
    'Calgate is running for the first time.',
    '',
    `  MCP endpoint: ${mcpUrl}`,
    `  API key:      ${firstRun.secret}`,
    '',
    'The key is shown only now: store it somewhere safe. It can read and write the calendar',
    `"Calgate" (${firstRun.calendarId}).`,
    '',
    `Next, open the dashboard at ${mcpUrl.replace(/\/api\/mcp$/, '/')} to create the owner account and`,
    `choose your time zone: until then the key answers in ${firstRun.timeZone}, the zone of this machine.`,
    '',
    `Client configurations (the dashboard's Overview shows the same, with ${KEY_PLACEHOLDER} for the key):`,
    ...clientConfigurations(mcpUrl, firstRun.secret).flatMap(({ label, text }) => ['', `${label}:`, text]),
    '',
  ].join('\n');
}
