import { CalgateError, err, type Result } from '@calgate/core';

/** Characters removed from one field, as `U+200B×2` entries. */
export interface SanitizedField {
  field: string;
  removed: string[];
}

export interface ScreenedText {
  value: string;
  /** Present when invisible characters were removed. */
  sanitized?: SanitizedField;
}

export function refuse(field: string, reason: string): Result<never, CalgateError> {
  return err(
    new CalgateError('invalid_argument', `Refused: '${field}' ${reason}`, {
      context: { field, firewall: true },
    }),
  );
}

/** Text on one line, cut to a length a message can quote. */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 57)}…` : flat;
}
