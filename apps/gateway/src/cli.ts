import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CalgateError } from '@calgate/core';
import {
  ApiKeyRepository,
  ConnectionRepository,
  type Database,
  migrate,
  TenancyRepository,
} from '@calgate/store';
import type { Logger } from 'pino';
import { bootstrapFirstRun, welcomeText } from './bootstrap.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { GoogleProviders } from './google/providers.ts';
import { GoogleConnections } from './google/service.ts';
import { createLogger } from './logger.ts';
import { connectDatabase, googleSetup, loadSecretBox } from './runtime.ts';
import { closeOnSignals, serve } from './serve.ts';

const USAGE = `Usage: calgate <command> [options]

Commands:
  start                         run Calgate; on first run create a tenant, a calendar and a key
  serve                         run the gateway
  migrate                       apply database migrations
  tenant create --name N        create a tenant
  tenant list
  key create --name N [--expires ISO]   create an API key (the secret is shown once)
  key list
  key revoke --key K
  calendar create --name N [--time-zone Z]   create a local calendar
  calendar list
  grant --key K --calendar C [--read] [--write]   set a key's access (write implies read)
  revoke-grant --key K --calendar C
  secrets reseal                re-seal stored credentials with the current ENCRYPTION_KEY
  connect google --refresh-token T [--email E] [--access none|read|write] [--keys K1,K2]
                                connect a Google account from an OAuth refresh token
  connect google-service-account --calendar ID [--access none|read|write] [--keys K1,K2]
                                add a calendar shared with the service account
  emulator google [--port N] [--host H] [--seed file.json]
                                run the Google Calendar + OAuth emulator (tests, demos)

Options:
  --tenant T   the tenant (optional when there is only one)
  --json       machine-readable output
`;

class UsageError extends Error {
  override name = 'UsageError';
}

interface Io {
  out(text: string): void;
  err(text: string): void;
}

const OPTIONS = {
  json: { type: 'boolean' },
  name: { type: 'string' },
  tenant: { type: 'string' },
  key: { type: 'string' },
  calendar: { type: 'string' },
  read: { type: 'boolean' },
  write: { type: 'boolean' },
  expires: { type: 'string' },
  'time-zone': { type: 'string' },
  'refresh-token': { type: 'string' },
  email: { type: 'string' },
  access: { type: 'string' },
  keys: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  seed: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function required(values: Values, name: 'name' | 'key' | 'calendar'): string {
  const value = values[name];
  if (value === undefined || value.trim() === '') {
    throw new UsageError(`--${name} is required.`);
  }
  return value.trim();
}

async function resolveTenant(tenancy: TenancyRepository, values: Values): Promise<string> {
  if (values.tenant !== undefined) {
    if ((await tenancy.getTenant(values.tenant)) === null) {
      throw new CalgateError('not_found', `No tenant ${values.tenant}.`);
    }
    return values.tenant;
  }
  const tenants = await tenancy.listTenants();
  const [only, ...others] = tenants;
  if (only === undefined) {
    throw new UsageError('There is no tenant yet: create one with `calgate tenant create --name <name>`.');
  }
  if (others.length > 0) {
    throw new UsageError(
      `Several tenants exist; pass --tenant (one of ${tenants.map((t) => t.id).join(', ')}).`,
    );
  }
  return only.id;
}

function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function print(io: Io, json: boolean | undefined, data: unknown, human: string): void {
  io.out(json ? JSON.stringify(data) : human);
}

async function adminCommand(
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
      print(io, values.json, tenants, tenants.map((t) => `${t.id}  ${t.name}`).join('\n') || 'No tenants.');
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
      const { key, secret } = await keys.create(tenantId, {
        name: required(values, 'name'),
        expiresAt: expiresAt ?? null,
      });
      print(
        io,
        values.json,
        { id: key.id, secret },
        `Created API key ${key.id}.\nSecret (shown only now): ${secret}\nGrant it calendars with: calgate grant --key ${key.id} --calendar <id> --read [--write]`,
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
              `${k.id}  ${k.prefix}…  ${k.name}  created ${k.createdAt.toISOString()}  last used ${k.lastUsedAt?.toISOString() ?? 'never'}${k.revokedAt ? '  REVOKED' : ''}${k.expiresAt ? `  expires ${k.expiresAt.toISOString()}` : ''}`,
          )
          .join('\n') || 'No API keys.',
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
      const timeZone = values['time-zone'] ?? (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
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
      const connections = new ConnectionRepository(db.prisma, await loadSecretBox(config, embedded));
      const report = await connections.resealAll();
      print(
        io,
        values.json,
        report,
        `Re-sealed ${report.resealed} credential(s).${report.unreadable.length > 0 ? ` Could not open: ${report.unreadable.join(', ')}` : ''}`,
      );
      return;
    }
    case 'connect google':
    case 'connect google-service-account': {
      const tenantId = await resolveTenant(tenancy, values);
      const access = values.access ?? 'read';
      if (access !== 'none' && access !== 'read' && access !== 'write') {
        throw new UsageError('--access must be none, read or write.');
      }
      const choice = {
        access,
        keyIds: values.keys
          ? values.keys
              .split(',')
              .map((k) => k.trim())
              .filter(Boolean)
          : [],
      } as const;
      const box = await loadSecretBox(config, embedded);
      const connections = new ConnectionRepository(db.prisma, box);
      const log = createLogger('silent');
      const google = new GoogleConnections(
        new GoogleProviders(await googleSetup(config), connections, log, () => {}),
        connections,
        tenancy,
        log,
        () => {},
      );
      let result: Awaited<ReturnType<GoogleConnections['connectOAuth']>>;
      if (command === 'connect google') {
        const refreshToken = values['refresh-token'];
        if (refreshToken === undefined || refreshToken === '') {
          throw new UsageError('--refresh-token is required.');
        }
        const token = await google.oauth().refresh(refreshToken);
        const email = values.email ?? token.email;
        if (email === undefined) {
          throw new UsageError('Google did not say whose token this is: pass --email.');
        }
        result = await google.connectOAuth(
          tenantId,
          { email, refreshToken, accessToken: token.accessToken, expiresAt: token.expiresAt },
          choice,
        );
      } else {
        result = await google.connectServiceAccountCalendar(tenantId, required(values, 'calendar'), choice);
      }
      print(
        io,
        values.json,
        result,
        `${result.reconnected ? 'Reconnected' : 'Connected'} ${result.accountEmail} (${result.connectionId}): ${result.calendars.map((c) => `${c.id} ${c.summary}`).join(', ')}`,
      );
      return;
    }
    default:
      throw new UsageError(`Unknown command '${command}'.`);
  }
}

/** `calgate emulator google`: the emulator in the foreground until SIGINT/SIGTERM. */
async function runEmulator(values: Values, io: Io): Promise<number> {
  const port = Number(values.port ?? '8900');
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError('--port must be a TCP port number.');
  }
  const { startGoogleEmulator } = await import('@calgate/google-emulator');
  const seed = values.seed === undefined ? {} : JSON.parse(await readFile(values.seed, 'utf8'));
  const emulator = await startGoogleEmulator({ port, host: values.host ?? '127.0.0.1', seed });
  io.out(
    values.json
      ? JSON.stringify({ url: emulator.url })
      : `Google emulator on ${emulator.url}\nPoint Calgate at it: GOOGLE_API_ROOT_URL=${emulator.url}/ GOOGLE_OAUTH_URL=${emulator.url}`,
  );
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return 0;
}

/** Runs the CLI; returns the exit code (long-running commands resolve once listening). */
export async function main(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    io.err(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    io.out(USAGE);
    return positionals.length === 0 && !values.help ? 2 : 0;
  }
  try {
    if (positionals.join(' ') === 'emulator google') {
      return await runEmulator(values, io);
    }
    const config = loadConfig(env);
    const [command] = positionals;
    if (command === 'serve' || command === 'start') {
      const log = createLogger(config.logLevel);
      const gateway = await serve(config, log);
      closeOnSignals(gateway, log);
      if (command === 'start') {
        const firstRun = await bootstrapFirstRun(gateway.runtime);
        io.out(welcomeText(`${config.publicUrl}/api/mcp`, firstRun));
      }
      return 0;
    }
    const log = createLogger(values.json ? 'silent' : 'warn');
    await adminCommand(config, log, io, positionals, values);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof CalgateError) {
      io.err(values.json ? JSON.stringify({ error: { message: error.message } }) : error.message);
      return 1;
    }
    io.err(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return 1;
  }
}
