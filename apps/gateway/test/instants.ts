/**
 * Answers write instants in the zone that applies to the call; tests about *which* instant a tool
 * found compare them in UTC with this, and tests about the zone check the text itself.
 */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** `value` with every RFC 3339 date-time in it rewritten in UTC (`…Z`, no milliseconds). */
export function inUtc<T>(value: T): T {
  if (typeof value === 'string') {
    return (
      RFC3339.test(value) ? new Date(Date.parse(value)).toISOString().replace('.000Z', 'Z') : value
    ) as T;
  }
  if (Array.isArray(value)) {
    return value.map(inUtc) as T;
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, inUtc(child)])) as T;
  }
  return value;
}
