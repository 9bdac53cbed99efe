/**
 * @calgate/rules — the classification-rule language. Pure: imports only `@calgate/core`, does no I/O.
 *
 * Queries are Gmail-style (`domain:acme.com -title:canceled`, `time-of-day:>17:00`,
 * `(title:sync OR title:standup) day-of-week:mon,wed`); `syntaxDoc` is the full reference.
 *
 * Typical use:
 *
 * ```ts
 * const compiled = compileQuery('domain:acme.com -response:declined');
 * if (!compiled.ok) return compiled; // RuleError: invalid_argument, message with "position N"
 * const set = new OccurrenceSet(occurrences); // fold and index every occurrence's fields once
 * const matches = set.indexesOf(compiled.value).map((i) => set.items[i]);
 * const result = classify(set.items[0], [{ id, projectId, weight: 1, query: compiled.value }]);
 * ```
 *
 * - `compileQuery(query)` → `Result<CompiledQuery, RuleError>`: parse, check and compile once;
 *   `CompiledQuery.matches(occurrence)` tests an `EventOccurrence` ({calendar, event} in Google's
 *   event shape) or a `PreparedOccurrence`. `ast` is the syntax tree; `properties` lists the
 *   properties used.
 * - `new OccurrenceSet(occurrences)` indexes many occurrences once; `set.indexesOf(query)` and
 *   `set.count(query)` answer a preview of any number of queries without visiting every occurrence
 *   per condition (words, domains and emails are looked up; weekday, time and flags read one packed
 *   column). It agrees with `matches` on every occurrence.
 * - `classify(occurrence, rules)` → `{projectId | null, confidence, needsReview, outcome, votes}`.
 * - `assembleQuery({conditions, logic})` → `Result<string, RuleError>` builds a query from
 *   structured conditions (quoting as needed); `conditionsOf(ast)` is its inverse for flat queries.
 * - `formatQuery(ast)` prints a tree as a canonical query.
 * - `PROPERTIES` / `PROPERTY_NAMES` describe every property (for tool schemas and editors);
 *   `suggestProperty(name)` gives the closest valid property; `closest(input, candidates)` the
 *   closest of any list (for "Did you mean" over names the caller holds).
 * - Errors are values: `RuleError` extends `CalgateError` (code `invalid_argument`) with `kind`,
 *   `position` (0-based, UTF-16 code units), `suggestion` and, for unknown properties,
 *   `validProperties`. Nothing here throws on bad input.
 */

export { assembleQuery, type Condition, type ConditionSet, conditionsOf } from './assemble.ts';
export { type Bitset, countBits, hasBit, indexesOf } from './bitset.ts';
export { RuleError, type RuleErrorDetails, type RuleErrorKind } from './errors.ts';
export { fold, wordsOf } from './fold.ts';
export {
  type EventOccurrence,
  eventZone,
  type OccurrenceAttendee,
  type OccurrenceCalendar,
  type OccurrenceEvent,
  type OccurrenceTime,
  PreparedOccurrence,
  prepareOccurrence,
} from './occurrence.ts';
export { OccurrenceSet } from './occurrence-set.ts';
export { MAX_DEPTH, MAX_QUERY_LENGTH, type RuleNode } from './parser.ts';
export {
  PROPERTIES,
  PROPERTY_NAMES,
  type PropertyInfo,
  type PropertyName,
  propertyInfo,
  suggestProperty,
} from './properties.ts';
export { type CompiledQuery, compileQuery, formatQuery, needsQuotes, quoteValue } from './query.ts';
export {
  type Classification,
  CONFIDENT_THRESHOLD,
  classify,
  type ProjectVote,
  REVIEW_THRESHOLD,
  type ScoringRule,
} from './score.ts';
export { closest } from './suggest.ts';
export { SYNTAX_EXAMPLES, syntaxDoc } from './syntax-doc.ts';
