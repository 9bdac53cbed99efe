/**
 * Single-value extended properties on events, as Graph keeps them: written in a create or update
 * body (`singleValueExtendedProperties: [{id, value}]`), read only through
 * `$expand=singleValueExtendedProperties($filter=id eq '…')`, and found with
 * `$filter=singleValueExtendedProperties/Any(ep: ep/id eq '…' and ep/value eq '…')`. Ids are
 * `{Type} {guid} Name {name}`, `{Type} {guid} Id 0x…` or `{Type} 0x…`; Graph answers them with the
 * type as it spells it and the GUID in lower case. The Name part is case-sensitive, the value is
 * compared without regard to case.
 */
import { graphErrors } from './errors.ts';
import type { EventRecord } from './state.ts';

const TYPES = new Map(
  [
    'String',
    'Integer',
    'Boolean',
    'SystemTime',
    'Binary',
    'Long',
    'Double',
    'CLSID',
    'Currency',
    'Short',
  ].map((t) => [t.toLowerCase(), t]),
);

/** The id as Graph answers it, or undefined when it is no extended property id. */
export function normalizeExtendedId(id: string): string | undefined {
  const named =
    /^(\w+)\s+\{([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}\s+Name\s+(\S.*)$/i.exec(
      id.trim(),
    );
  if (named) {
    const type = TYPES.get((named[1] as string).toLowerCase());
    return type && `${type} {${(named[2] as string).toLowerCase()}} Name ${named[3]}`;
  }
  const tagged = /^(\w+)\s+(?:\{([0-9a-f-]{36})\}\s+Id\s+)?(0x[0-9a-f]{1,8})$/i.exec(id.trim());
  if (tagged) {
    const type = TYPES.get((tagged[1] as string).toLowerCase());
    const guid = tagged[2] === undefined ? '' : `{${tagged[2].toLowerCase()}} Id `;
    return type && `${type} ${guid}${(tagged[3] as string).toLowerCase()}`;
  }
  return undefined;
}

function checkedId(id: unknown): string {
  const normalized = typeof id === 'string' ? normalizeExtendedId(id) : undefined;
  if (normalized === undefined) {
    throw graphErrors.badRequest(`The property ID '${String(id)}' is not valid for an extended property.`);
  }
  return normalized;
}

/** Stores the body's `singleValueExtendedProperties` on the event (a create or an update). */
export function applyExtended(event: EventRecord, value: unknown): void {
  if (value === undefined) {
    return;
  }
  if (!Array.isArray(value)) {
    throw graphErrors.badRequest('The singleValueExtendedProperties property must be a collection.');
  }
  const next = { ...(event.extended ?? {}) };
  for (const item of value) {
    const entry = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    if (typeof entry.value !== 'string') {
      throw graphErrors.badRequest('An extended property needs an id and a string value.');
    }
    next[checkedId(entry.id)] = entry.value;
  }
  event.extended = next;
}

const unquote = (text: string) => text.replace(/''/g, "'");

/**
 * The property ids `$expand` asks for: `singleValueExtendedProperties($filter=id eq '…')`, several
 * ids joined with `or`. Undefined without `$expand`; any other expansion is refused.
 */
export function parseExpand(query: URLSearchParams): string[] | undefined {
  const raw = query.get('$expand') ?? query.get('expand');
  if (raw === null) {
    return undefined;
  }
  const match = /^singleValueExtendedProperties\(\$filter=(.+)\)$/i.exec(raw.trim());
  if (!match) {
    const name = raw.split(/[(,]/)[0]?.trim() ?? raw;
    throw graphErrors.badRequest(
      `Parsing OData Select and Expand failed: Could not find a property named '${name}' on type 'microsoft.graph.event'.`,
    );
  }
  const ids: string[] = [];
  for (const clause of (match[1] as string).split(/\s+or\s+/i)) {
    const id = /^id eq '((?:[^']|'')*)'$/i.exec(clause.trim());
    if (!id) {
      throw graphErrors.badRequest(`Invalid filter clause in $expand: '${clause.trim()}'.`);
    }
    ids.push(checkedId(unquote(id[1] as string)));
  }
  return ids;
}

/** The `$filter=singleValueExtendedProperties/Any(…)` of a listing, or undefined for another filter. */
export function parseExtendedFilter(filter: string): { id: string; value: string } | undefined {
  const match =
    /^singleValueExtendedProperties\/any\((\w+):\s*\1\/id eq '((?:[^']|'')*)' and \1\/value eq '((?:[^']|'')*)'\)$/i.exec(
      filter.trim(),
    );
  if (!match) {
    return undefined;
  }
  return { id: checkedId(unquote(match[2] as string)), value: unquote(match[3] as string) };
}

export function matchesExtended(event: EventRecord, filter: { id: string; value: string }): boolean {
  const value = event.extended?.[filter.id];
  return value !== undefined && value.toLowerCase() === filter.value.toLowerCase();
}

/** The expanded properties of an event, as Graph renders them (absent when none is set). */
export function renderExtended(event: EventRecord, ids: readonly string[]): Record<string, unknown> {
  const found = ids.flatMap((id) => {
    const value = event.extended?.[id];
    return value === undefined ? [] : [{ id, value }];
  });
  return found.length === 0 ? {} : { singleValueExtendedProperties: found };
}
