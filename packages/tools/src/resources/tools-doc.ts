/**
 * `calgate://docs/tools`: the reference of the tools this key is offered (names, titles,
 * descriptions, notes, full input and output schemas), as /api/docs gives it for the whole
 * catalogue: what tools/list leaves out to stay small, for an agent to read when it needs it.
 */
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/server';
import type { CatalogueEntry } from '../catalogue.ts';
import { iconsOf } from '../icons.ts';

export const TOOLS_DOC_URI = 'calgate://docs/tools';

export function toolsDocResources(visible: readonly CatalogueEntry[]): Resource[] {
  if (visible.length === 0) {
    return [];
  }
  return [
    {
      uri: TOOLS_DOC_URI,
      name: 'tools',
      title: 'Tool reference',
      description:
        'The tools this API key is offered, with their notes, full input and output schemas and an example call each.',
      mimeType: 'application/json',
    },
  ];
}

/** The key's visible tools only: a tool it cannot call is not described. */
export function toolsDoc(visible: readonly CatalogueEntry[], publicUrl?: string) {
  return visible.map(({ definition, inputSchema, outputSchema }) => ({
    name: definition.name,
    toolset: definition.toolset,
    title: definition.title,
    // A tool's icon is its toolset's: here rather than in tools/list, which every agent pays for.
    ...(publicUrl === undefined ? {} : { icons: iconsOf(publicUrl, definition.toolset) }),
    description: definition.description,
    ...(definition.notes === undefined ? {} : { notes: definition.notes }),
    inputSchema,
    outputSchema,
    example: { tool: definition.name, intent: definition.exampleIntent, arguments: definition.example },
  }));
}

/** Reads the tool reference, or answers undefined for another URI (or a key without tools). */
export function readToolsDoc(
  uri: string,
  visible: readonly CatalogueEntry[],
  publicUrl?: string,
): ReadResourceResult | undefined {
  if (uri !== TOOLS_DOC_URI || visible.length === 0) {
    return undefined;
  }
  return {
    contents: [
      { uri, mimeType: 'application/json', text: JSON.stringify({ tools: toolsDoc(visible, publicUrl) }) },
    ],
  };
}
