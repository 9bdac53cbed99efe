/**
 * The read side of the firewall as the tool wrapper applies it to every answer (see answers.ts):
 * one cached screener per process, the key's tenant as insiders, and what was shown recorded in
 * the principal's ExposureLog.
 */
import type { Principal } from '../access.ts';
import type { SessionOptions } from '../server.ts';
import { type ExposureNote, screenAnswer } from './answers.ts';
import { Insiders } from './insiders.ts';
import { CachedScreener } from './screen-cache.ts';
import { firewallScreener, type Screener } from './screener.ts';

/** The firewall's verdict behind one cache shared by every request of the process. */
export const defaultScreener: Screener = new CachedScreener(firewallScreener);

// Keyed by the key's cached address list (a principal is made per request from the cached key).
const insidersOf = new WeakMap<
  readonly string[],
  { calendars: Principal['calendars']; insiders: Insiders }
>();

/**
 * The tenant's people: its accounts' and users' addresses, and the calendars the key reaches
 * (a shared calendar's own address organises its events). Unknown (no addresses loaded, as for
 * in-process servers): nothing is marked as organised outside.
 */
export function insiders(principal: Principal): Insiders | undefined {
  const { tenantAddresses, calendars } = principal;
  if (tenantAddresses === undefined) {
    return undefined;
  }
  const known = insidersOf.get(tenantAddresses);
  if (known !== undefined && known.calendars === calendars) {
    return known.insiders;
  }
  const found = new Insiders([
    ...tenantAddresses,
    ...calendars.flatMap((calendar) => [calendar.accountEmail, calendar.externalId]),
  ]);
  insidersOf.set(tenantAddresses, { calendars, insiders: found });
  return found;
}

/** A tool's answer with calendar text screened; `args.includeFlagged` shows flagged text fenced. */
export function readScreen<T>(
  answer: T,
  options: Pick<SessionOptions, 'access' | 'screener'>,
  args: unknown,
): { answer: T; exposures: ExposureNote[] } {
  return screenAnswer(answer, {
    screener: options.screener ?? defaultScreener,
    insiders: insiders(options.access.principal),
    reveal: (args as { includeFlagged?: unknown } | null)?.includeFlagged === true,
  });
}

/** Records what an answer exposed the key's agent to; a log that fails loses the record, not the answer. */
export async function recordExposures(
  options: Pick<SessionOptions, 'access' | 'exposures' | 'onInternalError'>,
  tool: string,
  notes: readonly ExposureNote[],
): Promise<void> {
  if (options.exposures === undefined) {
    return;
  }
  const { tenantId, keyId } = options.access.principal;
  const at = Date.now();
  try {
    await options.exposures.record(
      `${tenantId}:${keyId}`,
      notes.map((note) => ({ at, tool, ...note })),
    );
  } catch (error) {
    options.onInternalError?.(error, tool);
  }
}
