import type { z } from 'zod';

/** Names agents often reach for, mapped to Calgate's. */
const SYNONYMS: Record<string, string> = {
  title: 'summary',
  subject: 'summary',
  name: 'summary',
  calendar: 'calendarId',
  calendar_id: 'calendarId',
  event_id: 'eventId',
  id: 'eventId',
  start_time: 'timeMin',
  end_time: 'timeMax',
  from: 'timeMin',
  to: 'timeMax',
  limit: 'maxResults',
  max_results: 'maxResults',
  q: 'query',
  search: 'query',
};

/** Levenshtein distance, case-insensitive. */
export function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] ?? 0;
      const cost = a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1;
      row[j] = Math.min(current + 1, (row[j - 1] ?? 0) + 1, previous + cost);
      previous = current;
    }
  }
  return row[b.length] ?? 0;
}

/** The known property an unknown one most likely meant, if any is close enough. */
export function suggestProperty(unknown: string, known: readonly string[]): string | undefined {
  const synonym = SYNONYMS[unknown] ?? SYNONYMS[unknown.toLowerCase()];
  if (synonym !== undefined && known.includes(synonym)) {
    return synonym;
  }
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = distance(unknown, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(unknown.length / 3)) ? best : undefined;
}

function pathOf(issue: z.core.$ZodIssue): string {
  return issue.path.map(String).join('.');
}

interface SchemaDef {
  type?: string;
  innerType?: unknown;
  in?: unknown;
  element?: unknown;
  shape?: Record<string, unknown>;
}

function defOf(schema: unknown): SchemaDef | undefined {
  return (schema as { _zod?: { def?: SchemaDef } } | undefined)?._zod?.def;
}

/** The schema below optional, default, nullable and pipe wrappers. */
function unwrapped(schema: unknown): unknown {
  let current = schema;
  for (let depth = 0; depth < 10; depth++) {
    const def = defOf(current);
    if (def?.innerType !== undefined) {
      current = def.innerType;
    } else if (def?.type === 'pipe') {
      current = def.in;
    } else {
      break;
    }
  }
  return current;
}

/** The property names of the object at `path` in `schema` (array indexes step into items). */
export function propertiesAt(schema: unknown, path: readonly PropertyKey[]): string[] | undefined {
  let current = unwrapped(schema);
  for (const key of path) {
    const def = defOf(current);
    if (def?.type === 'object' && def.shape !== undefined) {
      current = unwrapped(def.shape[String(key)]);
    } else if (def?.type === 'array') {
      current = unwrapped(def.element);
    } else {
      return undefined;
    }
  }
  const def = defOf(current);
  return def?.type === 'object' && def.shape !== undefined ? Object.keys(def.shape) : undefined;
}

function describeIssue(issue: z.core.$ZodIssue, known: readonly string[], schema: unknown): string {
  const path = pathOf(issue);
  const where = path === '' ? 'arguments' : `'${path}'`;
  switch (issue.code) {
    case 'unrecognized_keys': {
      const here = issue.path.length === 0 ? known : (propertiesAt(schema, issue.path) ?? []);
      const unknown = issue.keys
        .map((key) => {
          const suggestion = suggestProperty(key, here);
          const hint = suggestion ? ` Did you mean '${suggestion}'?` : '';
          return `Unknown property '${path === '' ? key : `${path}.${key}`}'.${hint}`;
        })
        .join(' ');
      // The valid properties of the top level come once, at the end of the message.
      return issue.path.length === 0 || here.length === 0
        ? unknown
        : `${unknown} Valid properties of ${where}: ${here.join(', ')}.`;
    }
    case 'invalid_type':
      return issue.input === undefined
        ? `${where} is required (${issue.expected}).`
        : `${where} must be ${article(issue.expected)}, not ${typeName(issue.input)}.`;
    case 'too_big':
      return `${where} is too ${issue.origin === 'string' ? 'long' : 'large'}: at most ${String(issue.maximum)}${unit(issue.origin)}.`;
    case 'too_small':
      return `${where} is too ${issue.origin === 'string' ? 'short' : 'small'}: at least ${String(issue.minimum)}${unit(issue.origin)}.`;
    case 'invalid_value':
      return `${where} must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}.`;
    default:
      return sentence(path === '' ? issue.message : `${where}: ${issue.message}`);
  }
}

/** A problem as a sentence of its own: ends with a period unless it already ends a sentence. */
function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.?!]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

function unit(origin: string): string {
  if (origin === 'string') {
    return ' characters';
  }
  if (origin === 'array') {
    return ' items';
  }
  return '';
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function typeName(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  return article(typeof value);
}

/**
 * One readable sentence per problem, with the fix where we can tell it; the tool's properties are
 * listed only when one given is unknown (elsewhere they would bury the problem).
 */
export function describeInputError(
  toolName: string,
  error: z.ZodError,
  known: readonly string[],
  schema?: unknown,
): string {
  const problems = error.issues.slice(0, 5).map((issue) => describeIssue(issue, known, schema));
  const hidden = error.issues.length - problems.length;
  if (hidden > 0) {
    problems.push(`${hidden} more ${hidden === 1 ? 'problem is' : 'problems are'} not shown.`);
  }
  if (error.issues.some((issue) => issue.code === 'unrecognized_keys' && issue.path.length === 0)) {
    problems.push(`Valid properties: ${known.join(', ')}.`);
  }
  return `Invalid arguments for ${toolName}: ${problems.join(' ')}`;
}

/** A NUL or a UTF-16 surrogate without its pair: text no calendar or database can store. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding the NUL character is the point.
const UNSAFE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why some string in the arguments (a value, or a property name) cannot be stored, naming where
 * it is; undefined when every string is clean.
 */
export function unsafeTextIn(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') {
    const match = UNSAFE.exec(value);
    if (match === null) {
      return undefined;
    }
    const what = match[0] === '\u0000' ? 'a NUL character (U+0000)' : 'a lone UTF-16 surrogate';
    return `'${path || 'arguments'}' contains ${what}, which cannot be stored; remove it.`;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = unsafeTextIn(item, `${path}[${index}]`);
      if (problem !== undefined) {
        return problem;
      }
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const where = path === '' ? key : `${path}.${key}`;
      const problem = UNSAFE.test(key)
        ? `A property name in '${path || 'arguments'}' contains a NUL character or a lone surrogate.`
        : unsafeTextIn(child, where);
      if (problem !== undefined) {
        return problem;
      }
    }
  }
  return undefined;
}

/** A short JSON-RPC "invalid params" message for a request whose params do not fit its method. */
export function describeParamsError(method: string, error: z.core.$ZodError): string {
  const problems = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.length === 0 ? 'params' : issue.path.map(String).join('.');
    if (issue.code === 'invalid_type') {
      // The SDK parses without reportInput: the received type is only in the message.
      const received = issue.input === undefined ? /received (\w+)/.exec(issue.message)?.[1] : undefined;
      if (issue.input !== undefined) {
        return `${path} must be ${article(issue.expected)}, not ${typeName(issue.input)}`;
      }
      return received === undefined || received === 'undefined'
        ? `${path} is required (${issue.expected})`
        : `${path} must be ${article(issue.expected)}, not ${article(received)}`;
    }
    return `${path}: ${issue.message}`;
  });
  return `Invalid params for ${method}: ${problems.join('; ')}.`;
}
