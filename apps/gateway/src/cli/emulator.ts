import { readFile } from 'node:fs/promises';
import { type Io, UsageError, type Values } from './common.ts';

/** An emulator listens on a loopback or private address, where Calgate's API roots may point only with this. */
const PRIVATE_ROOTS = 'OUTBOUND_ALLOW_PRIVATE=true';

function portOf(values: Values, fallback: string): number {
  const port = Number(values.port ?? fallback);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError('--port must be a TCP port number.');
  }
  return port;
}

/** `calgate emulator google`: the emulator in the foreground until SIGINT/SIGTERM. */
export async function runEmulator(values: Values, io: Io): Promise<number> {
  const port = portOf(values, '8900');
  const { startGoogleEmulator } = await import('@calgate/google-emulator');
  const seed = values.seed === undefined ? {} : JSON.parse(await readFile(values.seed, 'utf8'));
  const emulator = await startGoogleEmulator({ port, host: values.host ?? '127.0.0.1', seed });
  io.out(
    values.json
      ? JSON.stringify({ url: emulator.url })
      : `Google emulator on ${emulator.url}\nPoint Calgate at it: GOOGLE_API_ROOT_URL=${emulator.url}/ GOOGLE_OAUTH_URL=${emulator.url} ${PRIVATE_ROOTS}`,
  );
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return 0;
}

/** `calgate emulator microsoft`: the Microsoft Graph emulator in the foreground until SIGINT/SIGTERM. */
export async function runMicrosoftEmulator(values: Values, io: Io): Promise<number> {
  const port = portOf(values, '8901');
  const { startMicrosoftEmulator } = await import('@calgate/microsoft-emulator');
  const seed = values.seed === undefined ? {} : JSON.parse(await readFile(values.seed, 'utf8'));
  const emulator = await startMicrosoftEmulator({ port, host: values.host ?? '127.0.0.1', seed });
  const { clientId, clientSecret } = emulator.client;
  io.out(
    values.json
      ? JSON.stringify({
          url: emulator.url,
          graphUrl: emulator.graphUrl,
          loginUrl: emulator.loginUrl,
          clientId,
          clientSecret,
        })
      : `Microsoft Graph emulator on ${emulator.url}\nPoint Calgate at it: MICROSOFT_GRAPH_URL=${emulator.graphUrl} MICROSOFT_LOGIN_URL=${emulator.loginUrl} MICROSOFT_CLIENT_ID=${clientId} MICROSOFT_CLIENT_SECRET=${clientSecret} ${PRIVATE_ROOTS}`,
  );
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return 0;
}
