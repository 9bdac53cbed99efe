import type { Database } from '@calgate/store';
import { ApiKeyRepository, ConnectionRepository, TenancyRepository } from '@calgate/store';
import { connectCaldav } from '../caldav/connect.ts';
import type { Config } from '../config.ts';
import type { ConnectResult } from '../connections/record.ts';
import { GoogleProviders } from '../google/providers.ts';
import { GoogleConnections } from '../google/service.ts';
import { subscribeIcs } from '../ics/subscriptions.ts';
import { createLogger } from '../logger.ts';
import { MicrosoftConnections, microsoftSetup } from '../microsoft/connect.ts';
import { googleSetup, loadSecretBox } from '../runtime.ts';
import { type Io, print, required, resolveTenant, UsageError, type Values } from './common.ts';

/** The CalDAV password: CALDAV_PASSWORD, else a hidden prompt on a terminal. */
async function caldavPassword(io: Io): Promise<string> {
  const fromEnv = (io.env ?? process.env).CALDAV_PASSWORD;
  if (fromEnv !== undefined && fromEnv !== '') {
    return fromEnv;
  }
  if (!process.stdin.isTTY) {
    throw new UsageError(
      'Set the CalDAV password in the environment variable CALDAV_PASSWORD (it is never a flag), or run this on a terminal to be asked for it.',
    );
  }
  // On the terminal itself, not through `io` (which ends each message with a newline): the
  // password is typed on the prompt's line.
  const { stdin, stderr } = process;
  stderr.write('CalDAV password: ');
  return new Promise((resolve, reject) => {
    let text = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      stderr.write('\n');
      if (error) {
        reject(error);
      } else {
        resolve(text);
      }
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') {
          return done();
        }
        if (char === '\u0003') {
          return done(new UsageError('Cancelled.'));
        }
        if (char === '\u007f' || char === '\b') {
          text = [...text].slice(0, -1).join('');
        } else {
          text += char;
        }
      }
    };
    stdin.on('data', onData);
  });
}

/**
 * `calgate connect google …`, `calgate connect google-service-account …`,
 * `calgate connect microsoft …`, `calgate connect caldav …` and `calgate connect ics …`: one shape
 * of answer for every provider.
 */
export async function connectCommand(
  db: Database,
  config: Config,
  embedded: boolean,
  io: Io,
  command: string,
  values: Values,
): Promise<void> {
  const tenancy = new TenancyRepository(db.prisma);
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
  if (command === 'connect microsoft') {
    const microsoft = new MicrosoftConnections(
      microsoftSetup(config),
      connections,
      tenancy,
      log,
      () => {},
      new ApiKeyRepository(db.prisma),
    );
    const refreshToken = values['refresh-token'];
    if (refreshToken === undefined || refreshToken === '') {
      throw new UsageError('--refresh-token is required.');
    }
    printConnected(io, values, await microsoft.connectOAuth(tenantId, { refreshToken }, choice));
    return;
  }
  const google = new GoogleConnections(
    new GoogleProviders(await googleSetup(config), connections, log, () => {}),
    connections,
    tenancy,
    log,
    () => {},
    new ApiKeyRepository(db.prisma),
  );
  let result: ConnectResult;
  if (command === 'connect ics') {
    const url = values.url?.trim();
    if (url === undefined || url === '') {
      throw new UsageError("--url is required: the feed's address (https://… or webcal://…).");
    }
    const name = values.name?.trim();
    if (name === undefined || name === '') {
      throw new UsageError("--name is required: the calendar's name in Calgate.");
    }
    result = await subscribeIcs(
      {
        connections,
        tenancy,
        google,
        allowPrivate: config.scheduler.allowPrivateTargets,
        db,
        keys: new ApiKeyRepository(db.prisma),
      },
      tenantId,
      { url, name },
      choice,
    );
  } else if (command === 'connect caldav') {
    const url = values.url?.trim();
    const username = values.username;
    if (url === undefined || url === '') {
      throw new UsageError(
        "--url is required: the CalDAV server's address (e.g. https://caldav.icloud.com).",
      );
    }
    if (username === undefined || username === '') {
      throw new UsageError('--username is required.');
    }
    const password = await caldavPassword(io);
    result = await connectCaldav(
      {
        connections,
        tenancy,
        google,
        allowPrivate: config.scheduler.allowPrivateTargets,
        resolve: io.resolveHost,
      },
      tenantId,
      { url, username, password },
      choice,
    );
  } else if (command === 'connect google') {
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
      {
        email,
        refreshToken,
        accessToken: token.accessToken,
        expiresAt: token.expiresAt,
        ...(token.scope === undefined ? {} : { scope: token.scope }),
      },
      choice,
    );
  } else {
    result = await google.connectServiceAccountCalendar(tenantId, required(values, 'calendar'), choice);
  }
  printConnected(io, values, result);
}

function printConnected(io: Io, values: Values, result: ConnectResult): void {
  print(
    io,
    values.json,
    result,
    `${result.reconnected ? 'Reconnected' : 'Connected'} ${result.accountEmail} (${result.connectionId}): ${result.calendars.map((c) => `${c.id} ${c.summary}`).join(', ')}`,
  );
}
