/** Which agent a scheduled prompt goes to, when the caller did not say outright. */

const AGENT_ID_MAX = 200;
/** `_meta` keys MCP clients use for the calling agent, most specific first. */
const META_KEYS = ['agentId', 'agent_id', 'letta_agent_id', 'caller_agent_id'] as const;

export type AgentIdSource = 'argument' | 'meta' | 'key' | 'target';

export interface ResolvedAgentId {
  agentId: string;
  source: AgentIdSource;
}

/** A non-empty string of at most 200 characters without control characters; trimmed. */
function usable(value: unknown): string | undefined {
  if (typeof value !== 'string') {
    return undefined;
  }
  const id = value.trim();
  if (id === '' || id.length > AGENT_ID_MAX || /\p{Cc}/u.test(id)) {
    return undefined;
  }
  return id;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The agent id an MCP request's `_meta` carries: `agentId`, `agent_id`, `letta_agent_id`,
 * `caller_agent_id`, then `agent.id`, the first usable one. A key holding something unusable
 * (a number, an empty or overlong string, control characters) is skipped, not trusted.
 */
export function agentIdFromMeta(meta: unknown): string | undefined {
  if (!isRecord(meta)) {
    return undefined;
  }
  for (const key of META_KEYS) {
    const id = Object.hasOwn(meta, key) ? usable(meta[key]) : undefined;
    if (id !== undefined) {
      return id;
    }
  }
  const agent = Object.hasOwn(meta, 'agent') ? meta.agent : undefined;
  return isRecord(agent) && Object.hasOwn(agent, 'id') ? usable(agent.id) : undefined;
}

/**
 * The agent a prompt is for, in this precedence: the tool argument, the request's `_meta`, the
 * API key's default, the target's default. `undefined` when none gives a usable id.
 */
export function resolveAgentId(input: {
  explicit?: string | null | undefined;
  meta?: unknown;
  keyDefault?: string | null | undefined;
  targetDefault?: string | null | undefined;
}): ResolvedAgentId | undefined {
  const candidates: [AgentIdSource, string | undefined][] = [
    ['argument', usable(input.explicit)],
    ['meta', agentIdFromMeta(input.meta)],
    ['key', usable(input.keyDefault)],
    ['target', usable(input.targetDefault)],
  ];
  for (const [source, agentId] of candidates) {
    if (agentId !== undefined) {
      return { agentId, source };
    }
  }
  return undefined;
}
