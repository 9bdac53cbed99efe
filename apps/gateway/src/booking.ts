import type { SlotLock } from '@calgate/locks';
import type { BookingRecord, BookingRepository } from '@calgate/store';
import type { BookingLedger, BookingServices, LedgerBooking } from '@calgate/tools';

/** Booking services for one API key: the shared lock, and the ledger scoped to the key's tenant. */
export type BookingFactory = (key: { tenantId: string; keyId: string }) => BookingServices;

function toLedger(record: BookingRecord): LedgerBooking {
  return {
    id: record.id,
    calendarId: record.calendarId,
    eventId: record.eventId,
    start: record.start,
    end: record.end,
    requestHash: record.requestHash,
    result: record.result,
  };
}

/**
 * The ledger as book_slot sees it: bookings are written for the caller's tenant and key, and
 * idempotency keys are looked up among that key's own. Overlap checks span the whole calendar
 * whoever booked, which is the point of the ledger.
 */
export function bookingLedger(
  repository: BookingRepository,
  key: { tenantId: string; keyId: string },
): BookingLedger {
  return {
    async confirm(input) {
      return toLedger(await repository.confirm({ ...input, tenantId: key.tenantId, keyId: key.keyId }));
    },
    async overlapping(calendarId, start, end) {
      return (await repository.overlapping(calendarId, start, end)).map(toLedger);
    },
    async byIdempotencyKey(idempotencyKey) {
      const record = await repository.byIdempotencyKey(key.tenantId, key.keyId, idempotencyKey);
      return record === null ? null : toLedger(record);
    },
    cancel(bookingId) {
      return repository.cancel(key.tenantId, bookingId);
    },
  };
}

export function bookingServices(deps: {
  repository: BookingRepository;
  lock: SlotLock;
  lockTtlMs: number;
}): BookingFactory {
  return (key) => ({
    lock: deps.lock,
    ledger: bookingLedger(deps.repository, key),
    lockTtlMs: deps.lockTtlMs,
  });
}
