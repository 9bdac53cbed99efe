/**
 * Read-modify-write guarded by the event's ETag: a concurrent edit is never overwritten
 * silently. On an ETag mismatch the event is read again; when the fields this write changes
 * did not change meanwhile, the write is applied once more on top of the newer version,
 * otherwise the caller is told what changed.
 */
import { CalgateError } from '@calgate/core';
import type { CalendarEvent, EventPatch, WriteOptions } from '@calgate/providers';
import type { CalendarHandle } from '../../access.ts';
import { isCode } from './common.ts';

export interface GuardedOptions {
  sendUpdates?: WriteOptions['sendUpdates'] | undefined;
  signal?: AbortSignal | undefined;
  /** The event as already read, to save a round trip. */
  current?: CalendarEvent | undefined;
  /**
   * The patch is a delta computed from the current state (add an attendee, set my response):
   * rebuilding it on the newer version keeps both edits, so concurrent changes to the same
   * fields are not a conflict.
   */
  rebase?: boolean;
}

export interface GuardedResult {
  event: CalendarEvent;
  /** False when the patch changed nothing, so nothing was written. */
  written: boolean;
  /** True when an ETag mismatch was resolved by writing on top of the newer version. */
  retried: boolean;
}

/** Fields whose meaning depends on each other: a change to one is a change to all. */
const LINKED: Record<string, string[]> = {
  start: ['start', 'end', 'recurrence'],
  end: ['start', 'end', 'recurrence'],
  recurrence: ['start', 'end', 'recurrence'],
};

function fieldsOf(patch: EventPatch): string[] {
  const keys = new Set<string>();
  for (const key of Object.keys(patch)) {
    for (const linked of LINKED[key] ?? [key]) {
      keys.add(linked);
    }
  }
  return [...keys];
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Fields among `fields` whose stored value differs between two reads of an event. */
export function changedFields(
  before: CalendarEvent,
  after: CalendarEvent,
  fields: readonly string[],
): string[] {
  const a = before as unknown as Record<string, unknown>;
  const b = after as unknown as Record<string, unknown>;
  return fields.filter((field) => !same(a[field], b[field]));
}

/** Whether applying `patch` to `event` would change anything. */
export function changesSomething(event: CalendarEvent, patch: EventPatch): boolean {
  const current = event as unknown as Record<string, unknown>;
  return Object.entries(patch).some(([key, value]) => !same(current[key], value));
}

function concurrentEdit(eventId: string, fields: readonly string[]): CalgateError {
  return new CalgateError(
    'conflict',
    `Event '${eventId}' was changed by someone else while this update was being applied (${fields.join(', ')} changed). Nothing was overwritten; read the event again and decide on the change.`,
    { context: { eventId, fields } },
  );
}

export async function guardedPatch(
  handle: CalendarHandle,
  eventId: string,
  build: (current: CalendarEvent) => EventPatch,
  options: GuardedOptions = {},
): Promise<GuardedResult> {
  const { provider, ref } = handle;
  const first = options.current ?? (await provider.getEvent(ref, eventId, options.signal));
  if (first.status === 'cancelled') {
    throw new CalgateError('not_found', `Event '${eventId}' has been deleted.`, {
      context: { eventId, alreadyDeleted: true },
    });
  }
  const patch = build(first);
  if (!changesSomething(first, patch)) {
    return { event: first, written: false, retried: false };
  }
  const write = (current: CalendarEvent, body: EventPatch) =>
    provider.patchEvent(ref, eventId, body, {
      ...(current.etag === undefined ? {} : { ifMatch: current.etag }),
      ...(options.sendUpdates === undefined ? {} : { sendUpdates: options.sendUpdates }),
    });
  try {
    return { event: await write(first, patch), written: true, retried: false };
  } catch (error) {
    if (!isCode(error, 'precondition_failed')) {
      throw error;
    }
  }
  const latest = await provider.getEvent(ref, eventId, options.signal);
  if (latest.status === 'cancelled') {
    throw new CalgateError(
      'conflict',
      `Event '${eventId}' was deleted while this update was being applied.`,
      {
        context: { eventId },
      },
    );
  }
  if (!options.rebase) {
    const changed = changedFields(first, latest, fieldsOf(patch));
    if (changed.length > 0) {
      throw concurrentEdit(eventId, changed);
    }
  }
  const again = options.rebase ? build(latest) : patch;
  if (!changesSomething(latest, again)) {
    return { event: latest, written: false, retried: true };
  }
  try {
    return { event: await write(latest, again), written: true, retried: true };
  } catch (error) {
    if (isCode(error, 'precondition_failed')) {
      throw new CalgateError(
        'conflict',
        `Event '${eventId}' keeps being changed by someone else; nothing was overwritten. Read it again and retry.`,
        { context: { eventId }, retry: true },
      );
    }
    throw error;
  }
}
