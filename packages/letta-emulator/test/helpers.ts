/** Shared fixtures: a seeded emulator and the official Letta client pointed at it over HTTP. */
import Letta from '@letta-ai/letta-client';
import { type LettaEmulator, type LettaSeed, startLettaEmulator } from '../src/index.ts';

export const KEY = 'sk-let-calgate-test-key';
export const OTHER_ORG_KEY = 'sk-let-other-org-key';
export const OTHER_ORG = 'org-11111111-1111-4111-8111-111111111111';

export const ANN_AGENT = 'agent-0a8b6f1e-3c55-4d5e-9a4e-1d2c3b4a5f60';
export const BOB_AGENT = 'agent-1b9c7a2f-4d66-4e6f-8b5f-2e3d4c5b6a71';
export const FOREIGN_AGENT = 'agent-2cad8b30-5e77-4f70-9c60-3f4e5d6c7b82';

export const baseSeed = (): LettaSeed => ({
  apiKeys: [KEY, { key: OTHER_ORG_KEY, organization: OTHER_ORG }],
  agents: [
    { id: ANN_AGENT, name: 'ann-assistant', created_at: '2026-01-05T09:00:00Z', tags: ['calendar'] },
    { id: BOB_AGENT, name: 'bob-assistant', created_at: '2026-01-06T09:00:00Z', reply: 'On it.' },
    { id: FOREIGN_AGENT, name: 'foreign', organization: OTHER_ORG, created_at: '2026-01-07T09:00:00Z' },
  ],
});

export async function startSeeded(seed: LettaSeed = baseSeed()): Promise<LettaEmulator> {
  return startLettaEmulator({ seed });
}

/** The official client; retries off unless asked, so faults surface as errors. */
export function clientFor(
  emulator: LettaEmulator,
  options: { apiKey?: string; maxRetries?: number; timeout?: number } = {},
): Letta {
  return new Letta({
    baseURL: emulator.url,
    apiKey: options.apiKey ?? KEY,
    maxRetries: options.maxRetries ?? 0,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  });
}

export const userText = (text: string) => ({
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text }] }],
});

/** What a call failed with. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}
