/**
 * GET /metrics in the Prometheus text format (version 0.0.4), behind a bearer token.
 *
 * A small registry written here rather than prom-client: the gateway exports a handful of series
 * (counters and one histogram by label, two gauges read at scrape time), the text format is a few
 * lines to write, and the image stays free of a dependency and its default process collectors.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Database } from '@calgate/store';
import type { FastifyInstance } from 'fastify';
import { errorBody } from './errors.ts';

/** Tool call durations, in seconds: from cache hits to slow upstream fan-outs. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** Tool error codes that mean the upstream provider (Google) failed or refused the connection. */
const UPSTREAM_CODES = new Set(['upstream_unavailable', 'needs_reauth']);

/** Why the gateway refused an /api/mcp request before any tool ran. */
export type RateLimitReason = 'key_rate' | 'batch_too_large' | 'streams';

export interface ToolCallSample {
  tool: string;
  outcome: 'ok' | 'error' | 'denied';
  errorCode: string | null;
  latencyMs: number;
}

export interface QueueDepth {
  /** Prompt jobs due now and not yet taken by a worker. */
  depth: number;
  /** Age of the oldest of them, in seconds. */
  lagSeconds: number;
}

export interface MetricsOptions {
  version: string;
  /** Read at each scrape; absent when no scheduler queue exists. */
  queueDepth?: () => Promise<QueueDepth>;
}

/** `name{a="1",b="2"}` with the label values escaped as the text format requires. */
function series(name: string, labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(
    ([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return pairs.length === 0 ? name : `${name}{${pairs.join(',')}}`;
}

class LabelledCounter {
  readonly #values = new Map<string, { labels: Record<string, string>; value: number }>();

  inc(labels: Record<string, string>, by = 1): void {
    const key = JSON.stringify(labels);
    const current = this.#values.get(key);
    if (current === undefined) {
      this.#values.set(key, { labels, value: by });
    } else {
      current.value += by;
    }
  }

  lines(name: string): string[] {
    return [...this.#values.values()].map(({ labels, value }) => `${series(name, labels)} ${value}`);
  }
}

class LabelledHistogram {
  readonly #values = new Map<
    string,
    { labels: Record<string, string>; counts: number[]; sum: number; n: number }
  >();

  observe(labels: Record<string, string>, value: number): void {
    const key = JSON.stringify(labels);
    let entry = this.#values.get(key);
    if (entry === undefined) {
      entry = { labels, counts: DURATION_BUCKETS.map(() => 0), sum: 0, n: 0 };
      this.#values.set(key, entry);
    }
    DURATION_BUCKETS.forEach((bound, index) => {
      if (value <= bound && entry !== undefined) {
        entry.counts[index] = (entry.counts[index] ?? 0) + 1;
      }
    });
    entry.sum += value;
    entry.n += 1;
  }

  lines(name: string): string[] {
    const out: string[] = [];
    for (const { labels, counts, sum, n } of this.#values.values()) {
      DURATION_BUCKETS.forEach((bound, index) => {
        out.push(`${series(`${name}_bucket`, { ...labels, le: String(bound) })} ${counts[index] ?? 0}`);
      });
      out.push(`${series(`${name}_bucket`, { ...labels, le: '+Inf' })} ${n}`);
      out.push(`${series(`${name}_sum`, labels)} ${sum}`);
      out.push(`${series(`${name}_count`, labels)} ${n}`);
    }
    return out;
  }
}

/** What the gateway counts; one per process (each gateway is scraped on its own). */
export class Metrics {
  readonly #options: MetricsOptions;
  readonly #calls = new LabelledCounter();
  readonly #durations = new LabelledHistogram();
  readonly #upstream = new LabelledCounter();
  readonly #rateLimited = new LabelledCounter();

  constructor(options: MetricsOptions) {
    this.#options = options;
  }

  /** One finished tool call, as the audit log records it. */
  toolCall(sample: ToolCallSample): void {
    this.#calls.inc({ tool: sample.tool, outcome: sample.outcome });
    this.#durations.observe({ tool: sample.tool }, sample.latencyMs / 1000);
    if (sample.errorCode !== null && UPSTREAM_CODES.has(sample.errorCode)) {
      this.#upstream.inc({ provider: 'google', reason: sample.errorCode });
    }
  }

  rateLimited(reason: RateLimitReason, calls = 1): void {
    this.#rateLimited.inc({ reason }, calls);
  }

  /** The exposition text; a queue that cannot be read is left out rather than failing the scrape. */
  async render(): Promise<string> {
    const lines = [
      '# HELP calgate_build_info The running Calgate version.',
      '# TYPE calgate_build_info gauge',
      `${series('calgate_build_info', { version: this.#options.version })} 1`,
      '# HELP calgate_tool_calls_total MCP tool calls by tool and outcome (ok, error, denied).',
      '# TYPE calgate_tool_calls_total counter',
      ...this.#calls.lines('calgate_tool_calls_total'),
      '# HELP calgate_tool_call_duration_seconds How long MCP tool calls took.',
      '# TYPE calgate_tool_call_duration_seconds histogram',
      ...this.#durations.lines('calgate_tool_call_duration_seconds'),
      '# HELP calgate_upstream_errors_total Tool calls failed by the calendar provider, by reason.',
      '# TYPE calgate_upstream_errors_total counter',
      ...this.#upstream.lines('calgate_upstream_errors_total'),
      '# HELP calgate_rate_limited_total Requests to /api/mcp refused by a limit (calls counted for batches).',
      '# TYPE calgate_rate_limited_total counter',
      ...this.#rateLimited.lines('calgate_rate_limited_total'),
    ];
    if (this.#options.queueDepth !== undefined) {
      const queue = await this.#options.queueDepth().catch(() => undefined);
      if (queue !== undefined) {
        lines.push(
          '# HELP calgate_scheduler_queue_depth Scheduled prompts due and not yet taken by a worker.',
          '# TYPE calgate_scheduler_queue_depth gauge',
          `calgate_scheduler_queue_depth ${queue.depth}`,
          '# HELP calgate_scheduler_queue_lag_seconds Age of the oldest scheduled prompt waiting for a worker.',
          '# TYPE calgate_scheduler_queue_lag_seconds gauge',
          `calgate_scheduler_queue_lag_seconds ${queue.lagSeconds}`,
        );
      }
    }
    return `${lines.join('\n')}\n`;
  }
}

/** The prompt queue's depth and lag, read from pg-boss's table (the dashboard's status reads the same). */
export function promptQueueDepth(db: Database): () => Promise<QueueDepth> {
  return async () => {
    const result = await db.pool.query<{ depth: number; lag: number | null }>(
      `SELECT count(*)::int AS depth, extract(epoch FROM now() - min(start_after))::float8 AS lag
         FROM pgboss.job WHERE name = 'calgate-prompt-due' AND state IN ('created', 'retry') AND start_after <= now()`,
    );
    const row = result.rows[0];
    return { depth: row?.depth ?? 0, lagSeconds: Math.max(0, row?.lag ?? 0) };
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * GET /metrics: 404 unless METRICS_TOKEN is set (nothing to find), 401 for a missing or wrong
 * token (compared in constant time), the exposition text otherwise.
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  deps: { metrics: Metrics; token: string | undefined },
): void {
  const expected = deps.token === undefined ? undefined : digest(deps.token);
  app.get('/metrics', async (request, reply) => {
    if (expected === undefined) {
      return reply.callNotFound();
    }
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (match?.[1] === undefined || !timingSafeEqual(digest(match[1]), expected)) {
      return reply
        .status(401)
        .header('www-authenticate', 'Bearer realm="calgate-metrics"')
        .send(
          errorBody(
            'unauthenticated',
            'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.',
            request.id,
          ),
        );
    }
    return reply
      .header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(await deps.metrics.render());
  });
}
