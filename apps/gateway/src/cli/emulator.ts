import { readFile } from 'node:fs/promises';
import { type Io, UsageError, type Values } from './common.ts';

/** `calgate emulator google`: the emulator in the foreground until SIGINT/SIGTERM. */
export async function runEmulator(values: Values, io: Io): Promise<number> {
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
