import { DEFAULT_TOOLSETS, TOOLSETS, validateToolsets } from '@calgate/store';
import { type Catalogue, catalogueDocs } from '@calgate/tools';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import { errorBody } from './errors.ts';

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

/** `?toolsets=a,b` (or the parameter repeated) as one list of names; undefined when absent. */
function toolsetsParam(query: unknown): string[] | undefined {
  const value = (query as { toolsets?: unknown } | undefined)?.toolsets;
  if (value === undefined) {
    return undefined;
  }
  const parts = Array.isArray(value) ? value : [value];
  return parts.flatMap((part) => String(part).split(','));
}

/**
 * /api/docs (the tool reference from the catalogue, all tools or those of `?toolsets=a,b`),
 * /healthz (alive) and /readyz (dependencies).
 */
export function registerMetaRoutes(app: FastifyInstance, deps: MetaRouteDeps): void {
  const tools = catalogueDocs(deps.catalogue);
  // One answer per selection of toolsets, built on first use; there are only a few selections.
  const answers = new Map<string, string>();
  function docsFor(selected: readonly string[] | undefined): string {
    const key = selected?.join(',') ?? '';
    let answer = answers.get(key);
    if (answer === undefined) {
      answer = JSON.stringify({
        name: 'Calgate',
        version: deps.version,
        endpoint: `${deps.publicUrl}/api/mcp`,
        transport: 'streamable-http',
        protocolVersion: LATEST_PROTOCOL_VERSION,
        auth: { type: 'bearer', header: 'Authorization: Bearer <API key>' },
        toolsets: { available: TOOLSETS, default: DEFAULT_TOOLSETS, shown: selected ?? TOOLSETS },
        tools: selected === undefined ? tools : tools.filter((tool) => selected.includes(tool.toolset)),
      });
      answers.set(key, answer);
    }
    return answer;
  }
  app.get('/api/docs', async (request, reply) => {
    const wanted = toolsetsParam(request.query);
    const checked = wanted === undefined ? undefined : validateToolsets(wanted);
    if (checked !== undefined && !checked.ok) {
      return reply.status(400).send(errorBody('invalid_argument', checked.error.message, request.id));
    }
    return reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'public, max-age=60')
      .send(docsFor(checked?.value));
  });

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
