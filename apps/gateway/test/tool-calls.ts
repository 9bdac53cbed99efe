/**
 * A tool call a test expects to succeed: the answer must be no error (the failure names the tool
 * and shows the answer's text), and the test reads its structured content.
 */
import type { Client } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { textOf } from './harness.ts';

export async function callOk(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
  return result.structuredContent as Record<string, unknown>;
}
