/**
 * Runs the emulator on its own:
 *   node packages/google-emulator/src/main.ts --port 8900 [--host 127.0.0.1] [--seed seed.json]
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startGoogleEmulator } from './emulator.ts';
import type { EmulatorSeed } from './seed.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8900' },
    host: { type: 'string', default: '127.0.0.1' },
    seed: { type: 'string' },
  },
});

const seed = values.seed ? (JSON.parse(await readFile(values.seed, 'utf8')) as EmulatorSeed) : {};
const emulator = await startGoogleEmulator({ port: Number(values.port), host: values.host, seed });
process.stdout.write(`Google emulator listening on ${emulator.url}\n`);

const stop = () => {
  emulator.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
