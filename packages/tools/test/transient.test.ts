import { connect } from 'node:net';
import { CalgateError } from '@calgate/core';
import { freePort } from '@calgate/testkit';
import { describe, expect, it } from 'vitest';
import { asUnavailable, isTransient, retryOnce } from '../src/transient.ts';

/** The error Node gives for a TCP connection nobody accepts, as pg and ioredis pass it on. */
async function refusedConnection(host: string): Promise<Error> {
  const port = await freePort();
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('error', (error) => resolve(error));
  });
}

/** A DatabaseError as pg raises it for a server message (only the fields the shape needs). */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

/** Prisma's error over @prisma/adapter-pg, as captured from a real failing query. */
function prismaError(code: string, cause: Record<string, unknown>): Error {
  const driverAdapterError = Object.assign(new Error('DriverAdapterError'), {
    name: 'DriverAdapterError',
    cause,
  });
  return Object.assign(new Error('\nInvalid `prisma.tenant.findFirst()` invocation:\n\n\n…'), {
    name: 'PrismaClientKnownRequestError',
    code,
    meta: { modelName: 'Tenant', driverAdapterError },
  });
}

describe('isTransient', () => {
  it('knows a refused TCP connection, also when Node tried several addresses', async () => {
    const refused = await refusedConnection('127.0.0.1');
    expect((refused as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(isTransient(refused)).toBe(true);
    // 'localhost' may resolve to ::1 and 127.0.0.1: Node then raises an AggregateError.
    expect(isTransient(await refusedConnection('localhost'))).toBe(true);
  });

  it('knows Postgres connection-level SQLSTATEs and nothing else from Postgres', () => {
    expect(isTransient(pgError('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(isTransient(pgError('57P03', 'the database system is starting up'))).toBe(true);
    expect(isTransient(pgError('08006', 'connection failure'))).toBe(true);
    expect(isTransient(pgError('53300', 'sorry, too many clients already'))).toBe(true);
    expect(isTransient(pgError('23505', 'duplicate key value violates unique constraint'))).toBe(false);
    expect(isTransient(pgError('42P01', 'relation "x" does not exist'))).toBe(false);
    expect(isTransient(pgError('57014', 'canceling statement due to user request'))).toBe(false);
  });

  it('looks into Prisma errors and the driver-adapter error they carry', () => {
    expect(
      isTransient(prismaError('P1001', { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 1 })),
    ).toBe(true);
    expect(isTransient(prismaError('P2010', { kind: 'ConnectionClosed' }))).toBe(true);
    expect(isTransient(prismaError('P2010', { kind: 'postgres', code: '57P01', severity: 'FATAL' }))).toBe(
      true,
    );
    expect(isTransient(prismaError('P2024', {}))).toBe(true);
    expect(isTransient(prismaError('P2002', { kind: 'UniqueConstraintViolation' }))).toBe(false);
  });

  it('knows the messages pg and ioredis raise without a code, also quoted or as a cause', () => {
    expect(isTransient(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isTransient(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isTransient(new Error('Connection is closed.'))).toBe(true);
    expect(isTransient(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(
      true,
    );
    expect(
      isTransient(new Error('Invalid `prisma.x()` invocation:\n\nConnection terminated unexpectedly')),
    ).toBe(true);
    expect(isTransient(new Error('lookup failed', { cause: new Error('Connection is closed.') }))).toBe(true);
  });

  it('leaves programming errors, plain values and Calgate errors alone', async () => {
    expect(isTransient(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(isTransient(undefined)).toBe(false);
    expect(isTransient('ECONNREFUSED')).toBe(false);
    const cause = await refusedConnection('127.0.0.1');
    expect(isTransient(new CalgateError('unavailable', 'Booking is unavailable right now.', { cause }))).toBe(
      false,
    );
  });
});

describe('asUnavailable', () => {
  it("turns a transient error into a retryable 'unavailable' that says to try again", async () => {
    const cause = await refusedConnection('127.0.0.1');
    const error = asUnavailable(cause, 'list_events', 'req_abc');
    expect(error).toBeInstanceOf(CalgateError);
    expect(error).toMatchObject({ code: 'unavailable', retry: true, cause });
    expect((error as Error).message).toBe(
      'Calgate is briefly unavailable (its database or cache did not answer) and could not complete list_events; try again in a few seconds (request req_abc).',
    );
    const bug = new TypeError('x is not a function');
    expect(asUnavailable(bug, 'list_events', 'req_abc')).toBe(bug);
  });
});

describe('retryOnce', () => {
  it('runs again once, after the delay, when the first attempt fails transiently', async () => {
    const refused = await refusedConnection('127.0.0.1');
    const attempts: number[] = [];
    const started = Date.now();
    const value = await retryOnce(
      async () => {
        attempts.push(Date.now() - started);
        if (attempts.length === 1) {
          throw refused;
        }
        return 'events';
      },
      { delayMs: 200 },
    );
    expect(value).toBe('events');
    expect(attempts).toHaveLength(2);
    expect((attempts[1] ?? 0) - (attempts[0] ?? 0)).toBeGreaterThanOrEqual(190);
  });

  it('gives up after the second failure, and never repeats other errors', async () => {
    let calls = 0;
    const down = pgError('57P03', 'the database system is starting up');
    await expect(
      retryOnce(
        async () => {
          calls += 1;
          throw down;
        },
        { delayMs: 10 },
      ),
    ).rejects.toBe(down);
    expect(calls).toBe(2);

    calls = 0;
    const denied = new CalgateError('permission_denied', 'No read grant.');
    await expect(
      retryOnce(async () => {
        calls += 1;
        throw denied;
      }),
    ).rejects.toBe(denied);
    expect(calls).toBe(1);
  });

  it('does not retry a call whose client went away', async () => {
    const aborted = new AbortController();
    aborted.abort();
    let calls = 0;
    await expect(
      retryOnce(
        async () => {
          calls += 1;
          throw new Error('Connection terminated unexpectedly');
        },
        { signal: aborted.signal },
      ),
    ).rejects.toThrow('Connection terminated');
    expect(calls).toBe(1);
  });
});
