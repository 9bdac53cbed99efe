// Generates the Prisma client offline. The client is pure TypeScript/WASM (driver adapter
// @prisma/adapter-pg); the CLI only asks for a schema engine binary, which we point at a script
// that reports itself unavailable so nothing is downloaded.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const result = spawnSync(process.execPath, ['node_modules/prisma/build/index.js', 'generate'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: `${root}scripts/schema-engine-unavailable.sh`,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  },
});
process.exit(result.status ?? 1);
