import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rankBm25 } from './bm25.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

interface DocumentedTool {
  name: string;
  title: string;
  description: string;
  example: { tool: string; intent: string };
}

/**
 * Tool choice, measured with the project's own examples: for every example /api/docs shows, a
 * BM25 search of all tools' name, title and description (what tools/list gives an agent to
 * choose by) for the example's intent, in a person's words, must rank the example's own tool
 * first. A description that stops saying when its tool is the one to use fails here.
 */
describe('tool choice by description, on the /api/docs examples', () => {
  let gw: TestGateway;
  let tools: DocumentedTool[];
  beforeAll(async () => {
    gw = await startTestGateway();
    const response = await fetch(`${gw.url}/api/docs`);
    tools = ((await response.json()) as { tools: DocumentedTool[] }).tools;
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('every example says what a person asks for, in words of its own', () => {
    expect(tools.length).toBeGreaterThan(40);
    for (const tool of tools) {
      expect(tool.example.tool, tool.name).toBe(tool.name);
      expect(tool.example.intent.length, tool.name).toBeGreaterThan(15);
      // An intent is a request, not the tool's description or name in other clothes.
      expect(tool.example.intent, tool.name).not.toContain(tool.name);
      expect(tool.description, tool.name).not.toContain(tool.example.intent);
    }
  });

  it("ranks every example's own tool first for its intent", () => {
    const documents = tools.map((tool) => ({
      id: tool.name,
      text: `${tool.name.replaceAll('_', ' ')} ${tool.title} ${tool.description}`,
    }));
    const misses: string[] = [];
    for (const tool of tools) {
      const ranked = rankBm25(documents, tool.example.intent);
      const [first, second] = ranked;
      // First, and strictly ahead: a tie is not a choice.
      if (first?.id !== tool.name || (second !== undefined && second.score === first.score)) {
        const place = ranked.findIndex((entry) => entry.id === tool.name) + 1;
        const top = ranked
          .slice(0, 3)
          .map((entry) => `${entry.id} ${entry.score.toFixed(2)}`)
          .join(', ');
        misses.push(`${tool.name} (place ${place}) for "${tool.example.intent}": ${top}`);
      }
    }
    console.info(
      `tool choice: ${tools.length - misses.length} of ${tools.length} examples pick their tool first`,
    );
    expect(misses).toEqual([]);
  });
});
