import type { parseArgs } from 'node:util';
import { CalgateError } from '@calgate/core';
import type { HostResolver } from '@calgate/scheduler';
import { type TenancyRepository, type Toolset, validateToolsets } from '@calgate/store';

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** The environment the CLI runs with (CALDAV_PASSWORD); absent, the process's. */
  env?: NodeJS.ProcessEnv;
  /** How a CalDAV server's host name is resolved for the outbound check; absent, the system's. */
  resolveHost?: HostResolver;
}

export const OPTIONS = {
  json: { type: 'boolean' },
  name: { type: 'string' },
  tenant: { type: 'string' },
  key: { type: 'string' },
  calendar: { type: 'string' },
  'default-calendar': { type: 'string' },
  read: { type: 'boolean' },
  write: { type: 'boolean' },
  expires: { type: 'string' },
  'time-zone': { type: 'string' },
  toolsets: { type: 'string' },
  'refresh-token': { type: 'string' },
  email: { type: 'string' },
  access: { type: 'string' },
  keys: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  seed: { type: 'string' },
  kind: { type: 'string' },
  url: { type: 'string' },
  username: { type: 'string' },
  'api-key': { type: 'string' },
  'default-agent': { type: 'string' },
  'hijack-policy': { type: 'string' },
  target: { type: 'string' },
  'owner-email': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type Values = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>['values'];

export function required(values: Values, name: 'name' | 'key' | 'calendar'): string {
  const value = values[name];
  if (value === undefined || value.trim() === '') {
    throw new UsageError(`--${name} is required.`);
  }
  return value.trim();
}

/**
 * The tenant a command acts on: `--tenant` by id or by a name no other tenant has; without it the
 * only tenant, else the install's first tenant while no other tenant shares its name (so the
 * first run's commands keep working once more tenants are created).
 */
export async function resolveTenant(tenancy: TenancyRepository, values: Values): Promise<string> {
  const tenants = await tenancy.listTenants();
  const wanted = values.tenant?.trim();
  if (wanted !== undefined) {
    if (tenants.some((t) => t.id === wanted)) {
      return wanted;
    }
    const named = tenants.filter((t) => t.name === wanted);
    if (named.length > 1) {
      throw new UsageError(
        `Several tenants are named ${wanted}; pass --tenant with an id (one of ${named.map((t) => t.id).join(', ')}).`,
      );
    }
    const [match] = named;
    if (match === undefined) {
      throw new CalgateError('not_found', `No tenant ${wanted}.`);
    }
    return match.id;
  }
  const [first, ...others] = tenants;
  if (first === undefined) {
    throw new UsageError('There is no tenant yet: create one with `calgate tenant create --name <name>`.');
  }
  if (others.some((t) => t.name === first.name)) {
    throw new UsageError(
      `Several tenants exist; pass --tenant (one of ${tenants.map((t) => `${t.id} (${t.name})`).join(', ')}).`,
    );
  }
  return first.id;
}

/** `--toolsets a,b` checked: a usage error naming the valid toolsets; undefined when not given. */
export function toolsetsOption(values: Values): Toolset[] | undefined {
  if (values.toolsets === undefined) {
    return undefined;
  }
  const checked = validateToolsets(values.toolsets.split(','));
  if (!checked.ok) {
    throw new UsageError(`--toolsets: ${checked.error.message}`);
  }
  return checked.value;
}

export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function print(io: Io, json: boolean | undefined, data: unknown, human: string): void {
  io.out(json ? JSON.stringify(data) : human);
}
