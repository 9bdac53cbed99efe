import { describe, expect, it } from 'vitest';
import { catalogue } from '../src/index.ts';
import { LISTED, listedAnnotations } from '../src/listed.ts';

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; required?: string[] };

const entries = catalogue().entries;

/** Every key used anywhere in a schema, nested. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) {
      keysOf(item, into);
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      into.add(key);
      keysOf(child, into);
    }
  }
  return into;
}

describe('what tools/list sends for each tool', () => {
  it('output schemas name the top-level fields of the full schema with their types, and nothing else', () => {
    for (const { definition, outputSchema, listed } of entries) {
      const full = outputSchema as Schema;
      const lean = listed.outputSchema as Schema;
      expect(Object.keys(lean), definition.name).toEqual(['type', 'properties']);
      expect(lean.type).toBe('object');
      expect(Object.keys(lean.properties ?? {}), definition.name).toEqual(Object.keys(full.properties ?? {}));
      for (const [name, property] of Object.entries(lean.properties ?? {})) {
        const fullType = full.properties?.[name]?.type;
        // Only the type: a schema that claims no more than the full one accepts every answer it accepts.
        expect(property, `${definition.name}.${name}`).toEqual(
          fullType === undefined ? {} : { type: fullType },
        );
      }
    }
  });

  it('input schemas keep every parameter and what is required; no marker or $ref reaches a client', () => {
    for (const { definition, inputSchema, listed } of entries) {
      const full = inputSchema as Schema;
      const lean = listed.inputSchema as Schema;
      expect(Object.keys(lean.properties ?? {}), definition.name).toEqual(Object.keys(full.properties ?? {}));
      expect(lean.required, definition.name).toEqual(full.required);
      for (const schema of [full, lean, outputOf(definition.name)]) {
        const keys = keysOf(schema);
        expect(keys.has(LISTED), definition.name).toBe(false);
        expect(keys.has('$ref') || keys.has('$defs'), definition.name).toBe(false);
      }
      expect(keysOf(lean).has('maxLength'), definition.name).toBe(false);
    }
  });

  it('nested objects marked so are listed as their description, which spells out their shape', () => {
    const update = entries.find((entry) => entry.definition.name === 'update_event');
    if (update === undefined) {
      throw new Error('update_event is not in the catalogue');
    }
    const start = (update.listed.inputSchema as Schema).properties?.start;
    expect(start).toEqual({ type: 'object', description: '{dateTime, timeZone?} or {date}' });
    // The full schema still types every field.
    expect(Object.keys((update.inputSchema as Schema).properties?.start?.properties ?? {})).toEqual([
      'dateTime',
      'date',
      'timeZone',
    ]);
  });

  it('annotations leave out what MCP defaults to, and read back as the full hints', () => {
    const defaults = {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    };
    for (const { definition, listed } of entries) {
      const hints = definition.annotations;
      const read = { ...defaults, ...listed.annotations };
      expect(read.readOnlyHint, definition.name).toBe(hints.readOnlyHint);
      expect(read.openWorldHint, definition.name).toBe(hints.openWorldHint);
      if (!hints.readOnlyHint) {
        expect(read.destructiveHint, definition.name).toBe(hints.destructiveHint);
        expect(read.idempotentHint, definition.name).toBe(hints.idempotentHint);
      }
    }
    expect(
      listedAnnotations({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true,
      }),
    ).toEqual({ readOnlyHint: true });
  });
});

function outputOf(name: string): Schema {
  return (entries.find((entry) => entry.definition.name === name)?.outputSchema ?? {}) as Schema;
}
