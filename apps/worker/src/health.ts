import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JobStatus } from './periodic.ts';

export interface HealthServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `GET /healthz` for container health checks: 200 while the process runs its schedules. A failing
 * job shows in the body but does not make the worker unhealthy: restarting would not fix a
 * database outage, and the job retries on its own.
 */
export async function startHealthServer(
  address: { host: string; port: number },
  jobs: () => JobStatus[],
): Promise<HealthServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/healthz') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' });
      response.end('{"error":"method_not_allowed"}');
      return;
    }
    const body = JSON.stringify({ status: 'ok', jobs: jobs() });
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(request.method === 'HEAD' ? undefined : body);
  });
  await listen(server, address);
  const { port } = server.address() as AddressInfo;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, address: { host: string; port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
