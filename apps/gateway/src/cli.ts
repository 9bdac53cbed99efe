import { parseArgs } from 'node:util';
import { CalgateError } from '@calgate/core';
import { DEFAULT_TOOLSETS, TOOLSETS } from '@calgate/store';
import { checkApiRootHosts } from './api-roots.ts';
import { bootstrapFirstRun, welcomeText } from './bootstrap.ts';
import { adminCommand } from './cli/admin.ts';
import { type Io, OPTIONS, UsageError } from './cli/common.ts';
import { runEmulator, runMicrosoftEmulator } from './cli/emulator.ts';
import { ConfigError, loadConfig } from './config.ts';
import { installHttpClient } from './http-client.ts';
import { createLogger } from './logger.ts';
import { closeOnSignals, ownerBanner, serve } from './serve.ts';
import { runWorker } from './worker-process.ts';

const USAGE = `Usage: calgate <command> [options]

Commands:
  start                         run Calgate with its worker; on first run create a tenant, a calendar and a key
  serve                         run the gateway alone (scheduled prompts need a worker)
  worker                        deliver scheduled prompts and do background upkeep (any number of them)
  migrate                       apply database migrations
  tenant create --name N [--owner-email E]
                                create a tenant; with --owner-email also an owner
                                invitation (the link is printed, and e-mailed with SMTP_URL)
  user reset-password --email E print a one-time, one-hour password reset link
                                (e-mailed with SMTP_URL)
  tenant list                   tenants with their time zone
  tenant set [--name N] [--time-zone Z|none]
                                rename the tenant, or set the zone every key without its
                                own answers in (none: each key's default calendar's)
  key create --name N [--expires ISO] [--toolsets a,b]
                                create an API key (the secret is shown once)
  key list                      keys with their default calendar, time zone, toolsets and hijack policy
  key set --key K [--default-calendar C|none] [--time-zone Z|none] [--default-agent A|none] [--toolsets a,b]
          [--hijack-policy ask|strict|off]
                                what calendarId 'primary' means for the key and its zone
                                (none: back to the automatic choice), which toolsets'
                                tools its agent sees: ${TOOLSETS.join(', ')}
                                (default ${DEFAULT_TOOLSETS.join(',')}), and what risky actions
                                need after its agent read suspicious content (default ask)
  key revoke --key K
  calendar create --name N [--time-zone Z]   create a local calendar (zone: the tenant's, else this machine's)
  calendar list
  grant --key K --calendar C [--read] [--write]   set a key's access (write implies read)
  revoke-grant --key K --calendar C
  secrets reseal                re-seal stored credentials with the current ENCRYPTION_KEY
  connect google --refresh-token T [--email E] [--access none|read|write] [--keys K1,K2]
                                connect a Google account from an OAuth refresh token
  connect google-service-account --calendar ID [--access none|read|write] [--keys K1,K2]
                                add a calendar shared with the service account
  connect microsoft --refresh-token T [--access none|read|write] [--keys K1,K2]
                                connect a Microsoft 365 or Outlook.com account from an OAuth
                                refresh token (the new one Microsoft answers is stored sealed)
  connect caldav --url URL --username U [--access none|read|write] [--keys K1,K2]
                                connect a CalDAV account (iCloud, Fastmail, Nextcloud…);
                                the password comes from CALDAV_PASSWORD or a prompt
  connect ics --url URL --name N [--keys K1,K2]
                                subscribe to a calendar feed (.ics, webcal): a read-only
                                calendar refreshed in the background; --keys may read it
  target create --kind webhook --name N --url U
                                add a webhook target for scheduled prompts (its whsec_
                                signing secret is shown once)
  target create --kind letta --name N --url BASE --api-key K [--default-agent A]
                                add a Letta server (and its API key) as a target
  target list                   targets: id, kind, name, origin, default agent, disabled
  target delete --target T
  target test --target T        send a signed test event (webhook) or list the agents
                                (Letta); exit 1 when the target does not work
  emulator google [--port N] [--host H] [--seed file.json]
                                run the Google Calendar + OAuth emulator (tests, demos)
  emulator microsoft [--port N] [--host H] [--seed file.json]
                                run the Microsoft Graph calendar + identity emulator

Options:
  --tenant T   the tenant, by id or name (optional when there is only one, or for the
               install's first tenant while no other tenant has its name)
  --json       machine-readable output
`;

/** Runs the CLI; returns the exit code (long-running commands resolve once listening). */
export async function main(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  installHttpClient();
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // A password on the command line is seen by other users and kept in shell history; the
    // value itself is never repeated.
    const message = argv.some((arg) => arg === '--password' || arg.startsWith('--password='))
      ? 'calgate takes no --password flag (a command line is seen by other users and kept in shell history): set the environment variable CALDAV_PASSWORD, or run the command on a terminal to be asked for the password.'
      : error instanceof Error
        ? error.message
        : String(error);
    io.err(`${message}\n\n${USAGE}`);
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
    if (positionals.join(' ') === 'emulator microsoft') {
      return await runMicrosoftEmulator(values, io);
    }
    const config = loadConfig(env);
    await checkApiRootHosts(config);
    const [command] = positionals;
    if (command === 'serve' || command === 'start') {
      const log = createLogger(config.logLevel);
      // `start` delivers scheduled prompts itself; `serve` leaves that to `calgate worker` processes.
      const gateway = await serve(config, log, { worker: config.workerInProcess ?? command === 'start' });
      closeOnSignals(gateway, log);
      if (command === 'start') {
        const firstRun = await bootstrapFirstRun(gateway.runtime);
        io.out(welcomeText(`${config.publicUrl}/api/mcp`, firstRun));
      }
      const banner = await ownerBanner(gateway, config.publicUrl);
      if (banner !== undefined) {
        io.out(banner);
      }
      return 0;
    }
    if (command === 'worker') {
      const log = createLogger(config.logLevel);
      const worker = await runWorker(config, log);
      closeOnSignals(worker, log);
      log.info({ health: worker.healthUrl }, 'calgate worker running');
      return 0;
    }
    const log = createLogger(values.json ? 'silent' : 'warn');
    await adminCommand(config, log, { ...io, env }, positionals, values);
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
