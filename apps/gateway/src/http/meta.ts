import { type Catalogue, catalogueDocs } from '@calgate/tools';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';

export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

export interface MetaRouteDeps {
  catalogue: Catalogue;
  publicUrl: string;
  version: string;
  readiness: readonly ReadinessCheck[];
}

/** /api/docs (the tool reference from the catalogue), /healthz (alive) and /readyz (dependencies). */
export function registerMetaRoutes(app: FastifyInstance, deps: MetaRouteDeps): void {
  const docs = JSON.stringify({
    name: 'Calgate',
    version: deps.version,
    endpoint: `${deps.publicUrl}/api/mcp`,
    transport: 'streamable-http',
    protocolVersion: LATEST_PROTOCOL_VERSION,
    auth: { type: 'bearer', header: 'Authorization: Bearer <API key>' },
    tools: catalogueDocs(deps.catalogue),
  });
  app.get('/api/docs', async (_request, reply) =>
    reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'public, max-age=60')
      .send(docs),
  );

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const results = await Promise.all(
      deps.readiness.map(async ({ name, check }) => {
        try {
          await Promise.race([
            check(),
            new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), 2_000).unref()),
          ]);
          return [name, 'ok'] as const;
        } catch (error) {
          return [name, error instanceof Error ? error.message : 'failed'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    return reply
      .status(ready ? 200 : 503)
      .send({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  });
}
