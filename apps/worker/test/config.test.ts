import { describe, expect, it } from 'vitest';
import { ConfigError, loadWorkerConfig } from '../src/index.ts';

const url = 'postgresql://calgate:secret@db:5432/calgate';

describe('loadWorkerConfig', () => {
  it('applies the defaults', () => {
    expect(loadWorkerConfig({ DATABASE_URL: url })).toEqual({
      databaseUrl: url,
      auditRetentionDays: 90,
      health: { host: '127.0.0.1', port: 8788 },
      logLevel: 'info',
    });
  });

  it('reads explicit values and treats empty ones as unset', () => {
    const config = loadWorkerConfig({
      DATABASE_URL: url,
      AUDIT_RETENTION_DAYS: '30',
      WORKER_PORT: '',
      WORKER_HOST: '0.0.0.0',
      LOG_LEVEL: 'debug',
    });
    expect(config.auditRetentionDays).toBe(30);
    expect(config.health).toEqual({ host: '0.0.0.0', port: 8788 });
    expect(config.logLevel).toBe('debug');
  });

  it('names every invalid variable', () => {
    const attempt = () =>
      loadWorkerConfig({ DATABASE_URL: 'mysql://x', AUDIT_RETENTION_DAYS: '0', WORKER_PORT: 'http' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/DATABASE_URL[\s\S]*AUDIT_RETENTION_DAYS[\s\S]*WORKER_PORT/);
  });

  it('requires DATABASE_URL', () => {
    expect(() => loadWorkerConfig({})).toThrow(/DATABASE_URL/);
  });
});
