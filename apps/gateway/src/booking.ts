import type { SlotLock } from '@calgate/locks';
import type { BookingRecord, BookingRepository } from '@calgate/store';
import type { BookingLedger, BookingServices, LedgerBooking } from '@calgate/tools';
import type { ConfirmedBookingsCache } from './booking-cache.ts';

/** Booking services for one API key: the shared lock, and the ledger scoped to the key's tenant. */
export type BookingFactory = (key: { tenantId: string; keyId: string }) => BookingServices;

function toLedger(record: BookingRecord, keyId: string): LedgerBooking {
  return {
    id: record.id,
    calendarId: record.calendarId,
    eventId: record.eventId,
    start: record.start,
    end: record.end,
    status: record.status,
    idempotencyKey: record.keyId === keyId ? record.idempotencyKey : null,
    requestHash: record.requestHash,
    result: record.result,
  };
}

/**
 * The ledger as the tools see it: every lookup is scoped to the caller's tenant, bookings are
 * written for the caller's key, and idempotency keys are looked up among that key's own. Overlap
 * checks span the whole calendar whoever booked, which is the point of the ledger; whether the
 * key may see a booking's calendar is the tools' check (CalendarAccess).
 */
export function bookingLedger(
  repository: BookingRepository,
  key: { tenantId: string; keyId: string },
  cache?: ConfirmedBookingsCache,
): BookingLedger {
  const { tenantId, keyId } = key;
  const out = (record: BookingRecord) => toLedger(record, keyId);
  return {
    async confirm(input) {
      try {
        return out(await repository.confirm({ ...input, tenantId, keyId }));
      } finally {
        // This process's next read sees the write at once, before its announcement comes back.
        cache?.changed(input.calendarId);
      }
    },
    async overlapping(calendarId, start, end) {
      return (await repository.overlapping(tenantId, calendarId, start, end)).map(out);
    },
    async confirmedIn(calendarIds, start, end) {
      const read = () => repository.confirmedIn(tenantId, calendarIds, start, end);
      const rows =
        cache === undefined ? await read() : await cache.confirmedIn(tenantId, calendarIds, start, end, read);
      return rows.map(out);
    },
    async byEvent(calendarId, eventId) {
      return (await repository.byEvent(tenantId, calendarId, eventId)).map(out);
    },
    async byId(bookingId) {
      const record = await repository.byId(tenantId, bookingId);
      return record === null ? null : out(record);
    },
    async byIdempotencyKey(idempotencyKey) {
      const record = await repository.byIdempotencyKey(tenantId, keyId, idempotencyKey);
      return record === null ? null : out(record);
    },
    async list(filter) {
      return (await repository.list(tenantId, filter)).map(out);
    },
    // The booking's calendar is not known here: everything kept is forgotten (writes are rare).
    cancel(bookingId) {
      return repository.cancel(tenantId, bookingId).finally(() => cache?.reset());
    },
    move(bookingId, start, end) {
      return repository.move(tenantId, bookingId, start, end).finally(() => cache?.reset());
    },
  };
}

export function bookingServices(deps: {
  repository: BookingRepository;
  lock: SlotLock;
  lockTtlMs: number;
  /** Keeps the availability tools' ledger reads while nothing was announced (see booking-cache.ts). */
  cache?: ConfirmedBookingsCache | undefined;
}): BookingFactory {
  return (key) => ({
    lock: deps.lock,
    ledger: bookingLedger(deps.repository, key, deps.cache),
    lockTtlMs: deps.lockTtlMs,
  });
}
