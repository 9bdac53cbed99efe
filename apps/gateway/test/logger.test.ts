import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';

describe('pino logger', () => {
  it('redacts secrets wherever they appear in a log line', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger('info', sink);
    log.info(
      {
        req: { headers: { authorization: 'Bearer cg_live_SECRET1', cookie: 'session=SECRET2' } },
        connection: { refreshToken: 'SECRET3', access_token: 'SECRET4', password: 'SECRET5' },
        key: { secret: 'SECRET6' },
        config: { encryptionKey: 'SECRET7', google: { clientSecret: 'SECRET8' } },
      },
      'something happened',
    );
    const line = lines.join('');
    expect(line).toContain('something happened');
    expect(line).not.toMatch(/SECRET\d/);
    expect(line).toContain('[redacted]');
  });
});
