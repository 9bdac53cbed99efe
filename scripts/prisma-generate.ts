// Generates the Prisma client offline. The client is pure TypeScript/WASM (driver adapter
// @prisma/adapter-pg); the CLI only asks for a schema engine binary, which we point at a script
// that reports itself unavailable so nothing is downloaded.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
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
if (result.status !== 0) {
  process.exit(result.status ?? 1);
}

// The generated client imports its query compiler as a module holding the WebAssembly as one
// base64 string; the module's text and that string then stay in memory for good (~9 MB of every
// process's heap). Read as a file instead, the text is let go once the module is compiled.
const classFile = `${root}packages/store/src/generated/prisma/internal/class.ts`;
const generated = readFileSync(classFile, 'utf8');
const imported =
  /const \{ wasm \} = await import\(("@prisma\/client\/runtime\/[\w.-]+\.wasm-base64\.mjs")\)\n(\s*)return await decodeBase64AsWasm\(wasm\)/;
const found = imported.exec(generated);
if (found === null) {
  process.stderr.write(
    `${classFile}: the query compiler is no longer imported as expected; update scripts/prisma-generate.ts.\n`,
  );
  process.exit(1);
}
const [, specifier, indent] = found;
writeFileSync(
  classFile,
  generated.replace(
    imported,
    [
      `const { readFile } = await import('node:fs/promises')`,
      `${indent}const { createRequire } = await import('node:module')`,
      `${indent}const text = await readFile(createRequire(import.meta.url).resolve(${specifier}), 'utf8')`,
      `${indent}return await decodeBase64AsWasm(text.slice(text.indexOf('"') + 1, text.lastIndexOf('"')))`,
    ].join('\n'),
  ),
);
