import { CalgateError } from '@calgate/core';

/** What went wrong with a query or a condition. */
export type RuleErrorKind =
  | 'empty_query'
  | 'query_too_long'
  | 'control_character'
  | 'invalid_unicode'
  | 'unclosed_quote'
  | 'unexpected_character'
  | 'missing_close_paren'
  | 'unexpected_close_paren'
  | 'empty_group'
  | 'too_deeply_nested'
  | 'dangling_or'
  | 'dangling_and'
  | 'not_operator'
  | 'dangling_negation'
  | 'missing_value'
  | 'unknown_property'
  | 'invalid_value'
  | 'no_conditions';

export interface RuleErrorDetails {
  /** 0-based index into the query (UTF-16 code units) where the problem is. */
  position?: number;
  /** For assembled queries: the index of the offending condition. */
  conditionIndex?: number;
  /** A corrected property name or value, when one is close. */
  suggestion?: string;
  /** For unknown properties: every valid property name. */
  validProperties?: readonly string[];
}

/**
 * A rule the language cannot accept. It is a `CalgateError` with code `invalid_argument`, so
 * transports map it like any other bad input; `position` lets an editor point at the problem.
 */
export class RuleError extends CalgateError {
  readonly kind: RuleErrorKind;
  readonly position: number | undefined;
  readonly conditionIndex: number | undefined;
  readonly suggestion: string | undefined;
  readonly validProperties: readonly string[] | undefined;

  constructor(kind: RuleErrorKind, message: string, details: RuleErrorDetails = {}) {
    const context: Record<string, unknown> = { kind };
    for (const [key, value] of Object.entries(details)) {
      if (value !== undefined) {
        context[key] = value;
      }
    }
    super('invalid_argument', message, { context });
    this.name = 'RuleError';
    this.kind = kind;
    this.position = details.position;
    this.conditionIndex = details.conditionIndex;
    this.suggestion = details.suggestion;
    this.validProperties = details.validProperties;
  }
}
