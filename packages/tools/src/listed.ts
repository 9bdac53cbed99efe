/**
 * What tools/list sends for a tool, which every agent pays for in its context on every list:
 * schemas and annotations cut down to what an agent or a validating client acts on. The full
 * schemas stay in /api/docs and the `calgate://docs/tools` resource; the handlers enforce all
 * of them, with messages that name what was wrong.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/** Marks a schema node for tools/list (a JSON Schema extension keyword, removed from every schema served). */
export const LISTED = 'x-calgate-listed';

/**
 * In tools/list, this nested object is its description alone, which spells out its shape
 * (`{dateTime, timeZone?} or {date}`): typed properties say the same at three times the cost.
 */
export function listedAsDescription<T extends z.ZodType>(schema: T, shape: string): T {
  return schema.meta({ description: shape, [LISTED]: 'description' }) as T;
}

/** Descriptions the server's instructions give once for every tool. */
const EXPLAINED = new Set<string>();

/**
 * In tools/list, this parameter goes undescribed: the server's instructions explain it once for
 * every tool (calendarId, calendarIds, scope, sendUpdates, format). Known by its text, so a use
 * that describes the parameter its own way keeps that description.
 */
export function explainedOnce<T extends z.ZodType>(schema: T, description: string): T {
  EXPLAINED.add(description);
  return schema.describe(description) as T;
}

/** The full schema served by /api/docs: the markers removed. */
export function withoutMarkers(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(withoutMarkers);
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key !== LISTED) {
      out[key] = withoutMarkers(child);
    }
  }
  return out;
}

/** Keywords that only guard against abuse or typos; the handlers enforce them, naming the limit. */
function isGuard(key: string, child: unknown): boolean {
  return (
    key === 'maxLength' ||
    key === 'minLength' ||
    key === 'maxItems' ||
    key === 'minItems' ||
    // Bounds on counts and minutes cap the work a call may ask for; none is near a real request.
    key === 'maximum' ||
    (key === 'minimum' && (child === 0 || child === 1)) ||
    (key === 'additionalProperties' && child === false)
  );
}

/**
 * A tool's input schema as tools/list sends it: without guard limits and
 * `additionalProperties: false`, a type an `enum` already implies, descriptions the
 * instructions give once, and nested objects marked to be their description.
 */
export function listedInput(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(listedInput);
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  const node = value as JsonSchema;
  if (node[LISTED] === 'description') {
    return { type: node.type, description: node.description };
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node)) {
    const dropped =
      key === LISTED ||
      isGuard(key, child) ||
      (key === 'type' && Array.isArray(node.enum)) ||
      (key === 'description' && typeof child === 'string' && EXPLAINED.has(child));
    if (!dropped) {
      out[key] = key === 'properties' ? listedProperties(child) : listedInput(child);
    }
  }
  return out;
}

function listedProperties(properties: unknown): unknown {
  if (properties === null || typeof properties !== 'object') {
    return properties;
  }
  return Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, listedInput(schema)]));
}

/**
 * A tool's output schema as tools/list sends it: the answer's top-level fields by name and
 * type, nothing nested. When a tool declares an output schema, 2025-11-25 and later require
 * structuredContent to conform, and clients (the official SDKs among them) validate it: this
 * schema stays true for every answer, since it claims only what the full schema does. What is
 * inside arrays and objects is in the full schema (/api/docs, `calgate://docs/tools`) and in
 * the answer itself. Each tool's schema stands alone: no `$ref` or `$defs` shared across tools.
 */
export function listedOutput(schema: JsonSchema & { type: 'object' }): JsonSchema & { type: 'object' } {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    properties[name] = property.type === undefined ? {} : { type: property.type };
  }
  return { type: 'object', properties };
}

/** The four hints, as the catalogue keeps them. */
export type Hints = Required<
  Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>
>;

/** The defaults MCP gives each hint when a tool leaves it out. */
const DEFAULT_HINTS: Hints = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

/**
 * Annotations as tools/list sends them: the hints that differ from MCP's defaults, since a
 * client reads an absent hint as its default; a read-only tool leaves out destructiveHint and
 * idempotentHint, which MCP defines only for tools that write. /api/docs gives all four.
 */
export function listedAnnotations(hints: Hints): ToolAnnotations {
  const out: ToolAnnotations = {};
  for (const key of Object.keys(DEFAULT_HINTS) as (keyof Hints)[]) {
    const writeOnly = key === 'destructiveHint' || key === 'idempotentHint';
    if (hints[key] !== DEFAULT_HINTS[key] && !(hints.readOnlyHint && writeOnly)) {
      out[key] = hints[key];
    }
  }
  return out;
}
