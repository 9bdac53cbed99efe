/**
 * The version a listing is given (FreshnessRule.check 'if-known'): while announcements are heard,
 * the calendar's sync state is read once and its version given until the calendar is announced;
 * while they are not, the check needs no read at all and gives no version (nothing may be kept).
 */
import type { MirrorFreshness } from '@calgate/store';
import { drivenWatch } from '@calgate/testkit';
import { describe, expect, it } from 'vitest';
import { MirrorBatches } from '../src/mirror/batch.ts';
import { FreshnessRule } from '../src/mirror/freshness.ts';
import type { MirrorReadDeps } from '../src/mirror/provider.ts';
import type { MirrorVersionWatch } from '../src/mirror/trusted.ts';

const NOW = Date.parse('2026-12-01T09:00:00Z');

const watch = drivenWatch;

/** A rule over one calendar whose sync state reads are counted; `version` is what they find. */
function rule(versions: MirrorVersionWatch | undefined) {
  const found = { version: '7', reads: 0 };
  const mirror: MirrorReadDeps['mirror'] = {
    freshness: async (ids: readonly string[]) => {
      found.reads += 1;
      const state: MirrorFreshness = {
        ready: true,
        syncedAt: NOW - 1_000,
        pushedAt: null,
        watched: false,
        version: found.version,
      };
      return new Map(ids.map((id) => [id, state]));
    },
    readResources: async () => new Map(),
    readFirst: async () => new Map(),
    resources: async () => [],
    applyWrite: async () => {},
  } as unknown as MirrorReadDeps['mirror'];
  const deps: MirrorReadDeps = {
    mirror,
    maxStalenessMs: 60_000,
    sync: async () => {},
    requestSync: async () => {},
    touch: () => {},
    now: () => NOW,
    ...(versions === undefined ? {} : { versions }),
  };
  const freshness = new FreshnessRule(
    { tenantId: 't1', connectionId: 'c1', auth: 'oauth' },
    deps,
    new MirrorBatches(mirror),
  );
  return { freshness, found };
}

const calendar = (id: string) => ({ id, externalId: id, timeZone: 'UTC' });

describe("a listing's mirror version", () => {
  it('is read once while announcements are heard, and again once the calendar is announced', async () => {
    const heard = watch(true);
    const { freshness, found } = rule(heard);
    const cal = calendar(`cal-${Math.random()}`);
    expect(await freshness.check(cal, 'if-known')).toMatchObject({ ok: true, version: '7' });
    expect(await freshness.check(cal, 'if-known')).toMatchObject({ ok: true, version: '7' });
    expect(found.reads).toBe(1);
    found.version = '8';
    heard.announce(cal.id);
    expect(await freshness.check(cal, 'if-known')).toMatchObject({ ok: true, version: '8' });
    expect(found.reads).toBe(2);
  });

  it('is not given while announcements are not heard, and then costs no read once a sync is known', async () => {
    const { freshness, found } = rule(watch(false));
    const cal = calendar(`cal-${Math.random()}`);
    await freshness.check(cal, 'if-known');
    const reads = found.reads;
    const again = await freshness.check(cal, 'if-known');
    expect(again.ok && again.version).toBeFalsy();
    expect(found.reads).toBe(reads);
  });
});
