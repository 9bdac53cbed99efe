import { z } from 'zod';

/** An empty variable (`FOO=` in a compose file) means "use the default", not "zero". */
const unsetIfEmpty = (value: unknown) => (value === '' ? undefined : value);

const schema = z.object({
  DATABASE_URL: z.url({
    protocol: /^postgres(ql)?$/,
    error: (issue) =>
      issue.input === undefined
        ? 'DATABASE_URL is required (the worker does not start an embedded Postgres)'
        : 'DATABASE_URL must be a postgres:// or postgresql:// URL',
  }),
  AUDIT_RETENTION_DAYS: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(1).max(36_500).default(90)),
  WORKER_HOST: z.preprocess(unsetIfEmpty, z.string().default('127.0.0.1')),
  WORKER_PORT: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(65_535).default(8788)),
  LOG_LEVEL: z.preprocess(
    unsetIfEmpty,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
});

export interface WorkerConfig {
  databaseUrl: string;
  auditRetentionDays: number;
  health: { host: string; port: number };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Validates the worker's environment once, at start; everything below receives typed values. */
export function loadWorkerConfig(env: Record<string, string | undefined>): WorkerConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(`Invalid worker configuration:\n${z.prettifyError(parsed.error)}`);
  }
  const { data } = parsed;
  return {
    databaseUrl: data.DATABASE_URL,
    auditRetentionDays: data.AUDIT_RETENTION_DAYS,
    health: { host: data.WORKER_HOST, port: data.WORKER_PORT },
    logLevel: data.LOG_LEVEL,
  };
}
