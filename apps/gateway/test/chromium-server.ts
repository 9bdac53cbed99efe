/**
 * Vitest global setup: one headless Chromium for the whole run, started when the first browser
 * test asks for it (a run without browser tests starts none). Each test file connects to it with
 * `launchChromium()` and works in contexts of its own, which closing its connection discards.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BrowserServer, chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `GET <url>/chromium` answers `{ wsEndpoint }` of the run's Chromium, starting it on first use. */
    chromiumBroker: string;
  }
}

/** Debian's Chromium, headless, with nothing phoning home. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
}

let running: Promise<BrowserServer> | undefined;
let broker: Server | undefined;

function shared(): Promise<BrowserServer> {
  if (running === undefined) {
    const starting = chromium.launchServer({
      executablePath: chromiumPath(),
      args: CHROMIUM_ARGS,
      host: '127.0.0.1',
    });
    running = starting;
    // A Chromium that failed to start or went away is started afresh for the next file.
    const forget = () => {
      if (running === starting) {
        running = undefined;
      }
    };
    starting.then((server) => server.process().once('exit', forget), forget);
  }
  return running;
}

export async function setup(project: TestProject): Promise<void> {
  broker = createServer((request, response) => {
    if (request.url !== '/chromium') {
      response.writeHead(404).end();
      return;
    }
    shared().then(
      (server) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ wsEndpoint: server.wsEndpoint() }));
      },
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  const listening = broker;
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  project.provide('chromiumBroker', `http://127.0.0.1:${(listening.address() as AddressInfo).port}`);
}

export async function teardown(): Promise<void> {
  const server = running;
  running = undefined;
  await new Promise((resolve) => broker?.close(resolve) ?? resolve(undefined));
  await server?.then((started) => started.close()).catch(() => undefined);
}
