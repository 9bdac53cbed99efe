/** One condition (`property:value` or a bare value): its property name and value checked and compiled. */
import { err, ok } from '@calgate/core';
import type { Parsed } from './ast.ts';
import { RuleError } from './errors.ts';
import { isSpace, type Token } from './lexer.ts';
import { compileValue } from './matchers.ts';
import { PROPERTY_NAMES, type PropertyName, propertyInfo, suggestProperty } from './properties.ts';

const shown = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}…` : text);

/** A condition's error-free form, or the error for its property name or value. */
export function condition(query: string, t: Extract<Token, { type: 'term' }>): Parsed {
  let property: PropertyName = 'text';
  if (t.name !== null) {
    const info = propertyInfo(t.name);
    if (info === undefined) {
      const suggestion = suggestProperty(t.name);
      const hint = suggestion === undefined ? '' : ` Did you mean '${suggestion}'?`;
      return err(
        new RuleError(
          'unknown_property',
          `Unknown property '${shown(t.name)}' at position ${t.position}.${hint} Valid properties: ${PROPERTY_NAMES.join(', ')}. To search for text containing ':', quote it.`,
          { position: t.position, validProperties: PROPERTY_NAMES, ...(suggestion ? { suggestion } : {}) },
        ),
      );
    }
    property = info.name;
  }
  if (t.value === '' && !t.quoted) {
    const next = query[t.valuePosition];
    const found = next === undefined ? 'the end of the query' : isSpace(next) ? 'a space' : `'${next}'`;
    return err(
      new RuleError(
        'missing_value',
        `Missing value for '${property}' at position ${t.valuePosition}: expected a value right after '${t.name}:', found ${found} (quote values that contain spaces, e.g. ${property}:"team meeting").`,
        { position: t.valuePosition },
      ),
    );
  }
  const compiled = compileValue(property, t.value);
  if (!compiled.ok) {
    const { reason, suggestion } = compiled.error;
    const hint = suggestion === undefined ? '' : ` Did you mean '${suggestion}'?`;
    const label = t.name === null ? "the search text (a bare value means 'text')" : `'${property}'`;
    return err(
      new RuleError(
        'invalid_value',
        `Invalid value '${shown(t.value)}' for ${label} at position ${t.valuePosition}: ${reason}.${hint}`,
        { position: t.valuePosition, ...(suggestion ? { suggestion } : {}) },
      ),
    );
  }
  return ok({
    ast: {
      type: 'condition',
      property,
      value: t.value,
      explicit: t.name !== null,
      quoted: t.quoted,
      position: t.position,
      valuePosition: t.valuePosition,
    },
    predicate: compiled.value.test,
    select: compiled.value.select,
  });
}
