/**
 * Seeding: API keys and agents. Keys and agents belong to an organization; a key sees only
 * its organization's agents, as on Letta Cloud, so another key's agent answers 404.
 */
import { randomUUID } from 'node:crypto';
import type { AgentRecord, LettaState } from './state.ts';

export const DEFAULT_ORGANIZATION = 'org-00000000-0000-4000-8000-000000000000';

export interface SeedApiKey {
  key: string;
  organization?: string;
}

export interface SeedAgent {
  /** `agent-<uuid>`; generated when absent. */
  id?: string;
  name: string;
  organization?: string;
  /** RFC 3339; defaults to the emulator's clock, one millisecond apart in seed order. */
  created_at?: string;
  description?: string;
  tags?: string[];
  model?: string;
  timezone?: string;
  metadata?: Record<string, unknown>;
  /** What the agent answers to every message (default: an acknowledgement quoting the prompt). */
  reply?: string;
}

export interface LettaSeed {
  /** Plain strings belong to the default organization. */
  apiKeys?: (string | SeedApiKey)[];
  agents?: SeedAgent[];
}

const AGENT_ID = /^agent-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function applySeed(state: LettaState, seed: LettaSeed): AgentRecord[] {
  for (const entry of seed.apiKeys ?? []) {
    const key = typeof entry === 'string' ? { key: entry } : entry;
    if (key.key.trim() === '') {
      throw new Error('A seeded API key is empty.');
    }
    state.apiKeys.set(key.key, key.organization ?? DEFAULT_ORGANIZATION);
  }
  const added: AgentRecord[] = [];
  let tick = state.now();
  for (const agent of seed.agents ?? []) {
    const id = agent.id ?? `agent-${randomUUID()}`;
    if (!AGENT_ID.test(id)) {
      throw new Error(`Agent id '${id}' is not of the form agent-<uuid>.`);
    }
    if (state.agents.has(id)) {
      throw new Error(`Agent '${id}' is seeded twice.`);
    }
    if (agent.name.trim() === '') {
      throw new Error(`Agent '${id}' has an empty name.`);
    }
    const createdAt = agent.created_at ?? new Date(tick++).toISOString();
    if (Number.isNaN(Date.parse(createdAt))) {
      throw new Error(`Agent '${id}' has created_at '${createdAt}', which is not an RFC 3339 time.`);
    }
    const record: AgentRecord = {
      id,
      name: agent.name,
      organization: agent.organization ?? DEFAULT_ORGANIZATION,
      createdAt: new Date(createdAt).toISOString(),
      updatedAt: new Date(createdAt).toISOString(),
      description: agent.description ?? null,
      tags: agent.tags ?? [],
      model: agent.model ?? 'openai/gpt-4o-mini',
      timezone: agent.timezone ?? 'UTC',
      metadata: agent.metadata ?? null,
      reply: agent.reply ?? null,
      messageIds: [],
      lastRunCompletion: null,
      lastStopReason: null,
    };
    state.agents.set(id, record);
    added.push(record);
  }
  return added;
}
