import { CalgateError } from '@calgate/core';
import { quoted } from '../sql.ts';
import { EVENT_ID_MAX, type Occurrence, RULE_QUERY_MAX, RULE_WEIGHT_MAX } from './model.ts';

const COLOUR = /^#[0-9a-fA-F]{6}$/;

export function cleanColour(value: unknown): string {
  if (typeof value !== 'string' || !COLOUR.test(value)) {
    const shown = typeof value === 'string' ? quoted(value) : typeof value;
    throw new CalgateError(
      'invalid_argument',
      `Colour must be #RRGGBB (a '#' and six hexadecimal digits, e.g. #4f46e5), got ${shown}.`,
    );
  }
  return value.toLowerCase();
}

export function cleanQuery(value: unknown): string {
  if (typeof value !== 'string') {
    throw new CalgateError('invalid_argument', 'Rule query must be a string.');
  }
  if (!value.isWellFormed() || value.includes('\u0000')) {
    throw new CalgateError('invalid_argument', 'Rule query contains a NUL character or a lone surrogate.');
  }
  const query = value.trim();
  if (query === '') {
    throw new CalgateError('invalid_argument', 'Rule query must not be empty.');
  }
  if (query.length > RULE_QUERY_MAX) {
    throw new CalgateError(
      'invalid_argument',
      `Rule query is ${query.length.toLocaleString('en')} characters long; at most ${RULE_QUERY_MAX.toLocaleString('en')} are allowed.`,
    );
  }
  return query;
}

export function cleanWeight(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > RULE_WEIGHT_MAX) {
    throw new CalgateError(
      'invalid_argument',
      `Rule weight must be a whole number from 1 to ${RULE_WEIGHT_MAX}, got ${String(value)}.`,
    );
  }
  return value;
}

export function cleanEventId(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > EVENT_ID_MAX) {
    throw new CalgateError('invalid_argument', `An event id must be 1 to ${EVENT_ID_MAX} characters.`);
  }
  if (!value.isWellFormed() || value.includes('\u0000')) {
    throw new CalgateError('invalid_argument', 'An event id contains a NUL character or a lone surrogate.');
  }
  return value;
}

export function cleanTimes(occurrence: Occurrence): void {
  const { start, end } = occurrence;
  if (!(start instanceof Date) || Number.isNaN(start.getTime())) {
    throw new CalgateError('invalid_argument', `Event ${occurrence.eventId} has no valid start.`);
  }
  if (!(end instanceof Date) || Number.isNaN(end.getTime())) {
    throw new CalgateError('invalid_argument', `Event ${occurrence.eventId} has no valid end.`);
  }
  if (end.getTime() < start.getTime()) {
    throw new CalgateError('invalid_argument', `Event ${occurrence.eventId} ends before it starts.`);
  }
}

export const projectNotFound = (id: string) =>
  new CalgateError('not_found', `No project ${id} in this tenant.`);
export const ruleNotFound = (id: string) => new CalgateError('not_found', `No rule ${id} in this tenant.`);
export const calendarNotFound = (id: string) =>
  new CalgateError('not_found', `No calendar ${id} in this tenant.`);
