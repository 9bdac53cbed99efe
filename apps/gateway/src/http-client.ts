/**
 * The process's HTTP client for `fetch`: undici's Agent from the pinned `undici` package, installed
 * as the global dispatcher that Node's built-in `fetch` uses. Node 24's bundled undici (7.x) throws
 * an uncatchable AssertionError (`assert(!this.paused)`, nodejs/undici#5360) and ends the process
 * when a server closes the connection while a response body waits to be read; undici 8 finishes
 * such a response instead. Every `fetch` a Calgate process makes (Graph, Google's token endpoint,
 * googleapis) then runs on the fixed client. Tenant-supplied URLs do not use `fetch` at all (they
 * go through the scheduler's pinned node:http requests).
 *
 * Only the Agent and the global-dispatcher setter are loaded: the package's index also loads its
 * own fetch, WebSocket, EventSource, caches, HTTP/2, proxies and mocks, which no Calgate process
 * uses and which kept ~3 MB of heap (and ~12 MB of resident memory after compiling them) in every
 * process.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

let installed = false;

/** Installs the HTTP client once per process; later calls do nothing. */
export function installHttpClient(): void {
  if (installed) {
    return;
  }
  const { setGlobalDispatcher } = require('undici/lib/global.js') as Pick<
    typeof Undici,
    'setGlobalDispatcher'
  >;
  const Agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
  setGlobalDispatcher(new Agent());
  installed = true;
}
