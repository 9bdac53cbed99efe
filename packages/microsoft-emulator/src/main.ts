/**
 * Runs the emulator on its own:
 *   node packages/microsoft-emulator/src/main.ts --port 8901 [--host 127.0.0.1] [--seed seed.json]
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startMicrosoftEmulator } from './emulator.ts';
import type { MicrosoftSeed } from './seed.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8901' },
    host: { type: 'string', default: '127.0.0.1' },
    seed: { type: 'string' },
  },
});

const seed = values.seed ? (JSON.parse(await readFile(values.seed, 'utf8')) as MicrosoftSeed) : {};
const emulator = await startMicrosoftEmulator({ port: Number(values.port), host: values.host, seed });
process.stdout.write(`Microsoft Graph emulator listening on ${emulator.url}\n`);

const stop = () => {
  emulator.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
