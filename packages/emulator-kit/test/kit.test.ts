import { describe, expect, it } from 'vitest';
import { checkScripted, FaultTable, opsMatch, Router } from '../src/index.ts';

interface Match {
  op?: string | string[];
  mailbox?: string;
}
interface Facts {
  op: string;
  mailbox?: string;
}
const matches = (m: Match | undefined, f: Facts) =>
  m === undefined || (opsMatch(m.op, f.op) && (m.mailbox === undefined || m.mailbox === f.mailbox));

describe('Router', () => {
  it('matches by method and pattern, decodes params, and tells a wrong method from no route', () => {
    const router = new Router<{ method: string; pattern: string; op: string }>();
    router.add([{ method: 'GET', pattern: '/v1.0/me/events/:id', op: 'events.get' }]);
    const found = router.match('GET', '/v1.0/me/events/AAMk%3D%3D');
    expect(found).toMatchObject({ route: { op: 'events.get' }, params: { id: 'AAMk==' } });
    expect(router.match('POST', '/v1.0/me/events/x')).toBe('wrongMethod');
    expect(router.match('GET', '/v1.0/me/events/x/')).toBeNull();
    expect(router.match('GET', '/v1.0/me/eventsX')).toBeNull();
  });

  it('takes an optional trailing slash when asked', () => {
    const router = new Router<{ method: string; pattern: string }>({ optionalTrailingSlash: true });
    router.add([{ method: 'GET', pattern: '/v1/agents/' }]);
    expect(router.match('GET', '/v1/agents')).not.toBeNull();
    expect(router.match('GET', '/v1/agents/')).not.toBeNull();
  });
});

describe('FaultTable', () => {
  it('uses scripted faults in order, adds scripted latencies, and counts uses down', () => {
    const faults = new FaultTable<Match, Facts, { code?: string }>(matches);
    faults.script({ match: { op: 'events.*' }, action: { kind: 'latency', ms: 50 } });
    faults.script({
      match: { op: 'events.list', mailbox: 'a' },
      times: 2,
      action: { kind: 'error', status: 503 },
    });
    expect(faults.decide({ op: 'events.list', mailbox: 'b' })).toEqual({ delayMs: 50 });
    expect(faults.decide({ op: 'events.list', mailbox: 'a' })).toEqual({
      delayMs: 0,
      action: { kind: 'error', status: 503 },
    });
    expect(faults.pending()).toEqual([
      { match: { op: 'events.list', mailbox: 'a' }, times: 1, action: { kind: 'error', status: 503 } },
    ]);
    faults.decide({ op: 'events.list', mailbox: 'a' });
    expect(faults.decide({ op: 'events.list', mailbox: 'a' })).toEqual({ delayMs: 0 });
  });

  it('adds latency rules and rolls seeded error rates the same way every run', () => {
    const roll = () => {
      const faults = new FaultTable<Match, Facts, { code?: string }>(matches, 7);
      faults.latency = [{ ms: 100, match: { op: 'calendars.list' } }];
      faults.errorRates = [{ rate: 0.5, status: 429, retryAfterSeconds: 2, code: 'TooManyRequests' }];
      return Array.from({ length: 20 }, () => faults.decide({ op: 'calendars.list' }));
    };
    const first = roll();
    expect(first).toEqual(roll());
    expect(first.every((d) => d.delayMs === 100)).toBe(true);
    const errors = first.filter((d) => d.action !== undefined);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.length).toBeLessThan(20);
    expect(errors[0]?.action).toEqual({
      kind: 'error',
      status: 429,
      retryAfterSeconds: 2,
      code: 'TooManyRequests',
    });
  });

  it('refuses scripted faults that could never apply', () => {
    expect(() => checkScripted({ times: 0, action: { kind: 'dropRequest' } })).toThrow(/positive integer/);
    expect(() => checkScripted({ action: { kind: 'error', status: 200 } as never })).toThrow(/400–599/);
  });
});
