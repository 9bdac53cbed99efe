/**
 * The process's fetch survives a server that closes the connection while a response body waits
 * to be read (Node 24's bundled undici ends the process there with an uncatchable AssertionError).
 * Each case runs in a child process, since the failure it guards against ends the process.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLIENT = fileURLToPath(new URL('../src/http-client.ts', import.meta.url));
const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const RUNTIME = fileURLToPath(new URL('../src/runtime.ts', import.meta.url));

/** Answers of several sizes, each followed by FIN, read only after a pause; prints how many survived. */
const SCRIPT = (install: boolean) => `
import { createServer } from 'node:net';
${install ? `import { installHttpClient } from ${JSON.stringify(CLIENT)}; installHttpClient();` : ''}
let read = 0;
for (const kb of [16, 32, 64, 100, 128, 200, 256, 512, 1024]) {
  for (const framing of ['length', 'close']) {
    const size = kb * 1024;
    const server = createServer((socket) => {
      socket.once('data', () => {
        socket.write(framing === 'close'
          ? 'HTTP/1.0 200 OK\\r\\n\\r\\n'
          : 'HTTP/1.1 200 OK\\r\\nContent-Length: ' + size + '\\r\\nConnection: close\\r\\n\\r\\n');
        socket.end(Buffer.alloc(size, 97));
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const response = await fetch('http://127.0.0.1:' + server.address().port + '/');
    await new Promise((resolve) => setTimeout(resolve, 100));
    read += (await response.arrayBuffer()).byteLength === size ? 1 : 0;
    server.close();
  }
}
console.log('read ' + read + ' of 18');
`;

function run(install: boolean) {
  return spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT(install)], {
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('the HTTP client of Calgate processes', () => {
  it('reads every answer whose server closed the connection before the body was read', () => {
    const child = run(true);
    expect(child.stderr).not.toMatch(/AssertionError/);
    expect(child.stdout.trim()).toBe('read 18 of 18');
    expect(child.status).toBe(0);
  });

  it("is what Node's built-in fetch uses in the calgate CLI and every runtime", () => {
    const probe = (call: string) =>
      spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `${call}
const installed = globalThis[Symbol.for('undici.globalDispatcher.1')];
console.log(installed?.constructor.name ?? 'none');`,
        ],
        { encoding: 'utf8', timeout: 60_000 },
      ).stdout.trim();
    expect(probe('')).toBe('none');
    expect(
      probe(
        `import { main } from ${JSON.stringify(CLI)};
await main(['--version'], {}, { out: () => {}, err: () => {} });`,
      ),
    ).toBe('Dispatcher1Wrapper');
    // createRuntime installs it before anything else (here it then fails for want of a database).
    expect(
      probe(
        `import { createRuntime } from ${JSON.stringify(RUNTIME)};
await createRuntime({ databaseUrl: 'postgres://127.0.0.1:9/none' }, console).catch(() => {});`,
      ),
    ).toBe('Dispatcher1Wrapper');
  });

  it("loads only undici's Agent, not its own fetch, WebSocket, caches or mocks", () => {
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module';
import { installHttpClient } from ${JSON.stringify(CLIENT)};
installHttpClient();
const loaded = Object.keys(createRequire(${JSON.stringify(CLIENT)}).cache).filter((path) => path.includes('/undici/'));
console.log(JSON.stringify(loaded.map((path) => path.slice(path.lastIndexOf('/undici/') + 8))));
const response = await fetch('data:text/plain,ok');
console.log(await response.text());`,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    const [modules, answer] = child.stdout.trim().split('\n');
    const loaded = JSON.parse(modules ?? '[]') as string[];
    expect(loaded).toContain('lib/dispatcher/agent.js');
    expect(loaded).not.toContain('index.js');
    expect(loaded.filter((path) => /^lib\/(web|cache|mock|interceptor)\//.test(path))).toEqual([]);
    expect(answer).toBe('ok');
  });
});
