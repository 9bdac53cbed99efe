/**
 * The same call through two gateways sharing a database, one reading the mirror and one asking
 * the upstream (MIRROR_READS=false): the answers are equal but for the mirror's `syncedAt`, which
 * says which sync it reflects; the upstream is asked nothing for the mirror's answer unless told.
 */
import type { Client } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { callOk } from './tool-calls.ts';

export interface MirrorComparison {
  /** The gateway reading the mirror, and the one asking the upstream (read when a call is made). */
  viaMirror: () => Client;
  viaUpstream: () => Client;
  /** The upstream's name, and how many reads it has answered so far. */
  upstream: string;
  upstreamReads: () => number;
}

/** What a call is expected to do: ask the upstream too (calendars the mirror does not hold), carry a sync. */
export interface Expected {
  asksUpstream: boolean;
  synced: boolean;
}

/** Compares one call's answers through both gateways and gives the mirror's, without its syncedAt. */
export function mirrorComparison(
  sides: MirrorComparison,
): (name: string, args: Record<string, unknown>, expected?: Expected) => Promise<Record<string, unknown>> {
  return async (name, args, expected = { asksUpstream: false, synced: true }) => {
    const before = sides.upstreamReads();
    const mirrored = await callOk(sides.viaMirror(), name, args);
    if (expected.asksUpstream) {
      expect(
        sides.upstreamReads(),
        `${name} asked ${sides.upstream} about calendars it does not mirror`,
      ).toBeGreaterThan(before);
    } else {
      expect(sides.upstreamReads(), `${name} asked ${sides.upstream}`).toBe(before);
    }
    const upstream = await callOk(sides.viaUpstream(), name, args);
    const { syncedAt, ...rest } = mirrored;
    if (expected.synced) {
      expect(typeof syncedAt, `${name} says which sync it reflects`).toBe('string');
      expect(Date.parse(String(syncedAt))).toBeLessThanOrEqual(Date.now());
    }
    expect(upstream.syncedAt).toBeUndefined();
    expect(rest, `${name} ${JSON.stringify(args)}`).toEqual(upstream);
    return rest;
  };
}
