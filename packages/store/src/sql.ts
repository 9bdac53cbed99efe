/** What the repositories share about Postgres: error codes, statement parameters, columns as milliseconds, checked text. */
import { CalgateError } from '@calgate/core';
import pg from 'pg';

/**
 * The parameters of a statement written per call, starting with `initial`: `param` adds a value
 * and returns its placeholder (`$n`).
 */
export function sqlParams(...initial: unknown[]): { params: unknown[]; param: (value: unknown) => string } {
  const params: unknown[] = [...initial];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  return { params, param };
}

export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
// Control characters and the Unicode line/paragraph separators never belong in a name.
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

export function pgCode(error: unknown): { code?: string; constraint?: string } {
  return error as { code?: string; constraint?: string };
}

export const quoted = (value: string) => `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;

export function cleanText(value: unknown, label: string, max: number): string {
  if (typeof value !== 'string') {
    throw new CalgateError('invalid_argument', `${label} must be a string.`);
  }
  if (!value.isWellFormed()) {
    throw new CalgateError('invalid_argument', `${label} is not valid Unicode text (a lone surrogate).`);
  }
  const text = value.normalize('NFC').trim();
  if (text === '') {
    throw new CalgateError('invalid_argument', `${label} must not be empty.`);
  }
  if (CONTROL.test(text)) {
    throw new CalgateError(
      'invalid_argument',
      `${label} must not contain control characters or line breaks.`,
    );
  }
  if (text.length > max) {
    throw new CalgateError(
      'invalid_argument',
      `${label} is ${text.length.toLocaleString('en')} characters long; at most ${max.toLocaleString('en')} are allowed.`,
    );
  }
  return text;
}

/**
 * A TIMESTAMPTZ(3) column as epoch milliseconds (float8): cheaper to send and read than
 * timestamptz text. `extract` would be exact at any precision but computes in numeric and then
 * converts through text: a quarter of PostgreSQL's CPU for a 50-event range read; date_part computes
 * in float8, whose error stays far below half a millisecond for every instant of years
 * 1–9999, so rounding gives the stored millisecond exactly (tested over that range). Only for
 * millisecond columns: all of Calgate's are TIMESTAMPTZ(3).
 */
export const ms = (column: string, as = column) => `round(date_part('epoch', ${column}) * 1000) AS ${as}`;

/**
 * ms() as int8, for the reads on every tool call's path: PostgreSQL writes an integer in a
 * fraction of the time it takes to write the shortest exact text of a float (a tenth of a
 * 50-event range read's CPU). The driver hands int8 over as text; read such rows with
 * EPOCH_MS_TYPES, which makes numbers of them (epoch milliseconds are far below 2^53).
 */
export const msInt = (column: string, as = column) =>
  `round(date_part('epoch', ${column}) * 1000)::int8 AS ${as}`;

const INT8 = 20;

export const EPOCH_MS_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
