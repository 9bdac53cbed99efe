/**
 * `GET /v1/agents/` and `GET /v1/agents/{agent_id}`: the agent list with Letta's cursor
 * pagination (`before`, `after`, `limit`, `order`, `order_by`) and filters, and AgentState.
 */
import { apiErrors, type ValidationIssue } from './errors.ts';
import { json, type RequestContext, type Route } from './http.ts';
import type { AgentRecord, LettaState } from './state.ts';

const DEFAULT_LIMIT = 50;

/** The AgentState Letta returns: the required fields plus the common optional ones. */
export function renderAgent(agent: AgentRecord): Record<string, unknown> {
  const [provider = 'openai', ...rest] = agent.model.split('/');
  const modelName = rest.join('/') || agent.model;
  return {
    id: agent.id,
    name: agent.name,
    agent_type: 'letta_v1_agent',
    description: agent.description,
    system: 'You are a helpful assistant with persistent memory.',
    tags: agent.tags,
    blocks: [],
    memory: { agent_type: 'letta_v1_agent', blocks: [], file_blocks: [] },
    tools: [],
    sources: [],
    llm_config: {
      model: modelName,
      model_endpoint_type: provider,
      context_window: 128_000,
      handle: agent.model,
    },
    model: agent.model,
    embedding: 'openai/text-embedding-3-small',
    metadata: agent.metadata,
    timezone: agent.timezone,
    message_ids: agent.messageIds,
    created_at: agent.createdAt,
    updated_at: agent.updatedAt,
    created_by_id: null,
    last_updated_by_id: null,
    project_id: null,
    template_id: null,
    base_template_id: null,
    identity_ids: [],
    last_run_completion: agent.lastRunCompletion,
    last_stop_reason: agent.lastStopReason,
    hidden: null,
  };
}

interface ListQuery {
  limit: number;
  before?: string;
  after?: string;
  descending: boolean;
  name?: string;
  queryText?: string;
  tags: string[];
  matchAllTags: boolean;
}

function bool(query: URLSearchParams, name: string, issues: ValidationIssue[]): boolean | undefined {
  const raw = query.get(name);
  if (raw === null) {
    return undefined;
  }
  if (['true', '1', 'yes', 'on'].includes(raw.toLowerCase())) {
    return true;
  }
  if (['false', '0', 'no', 'off'].includes(raw.toLowerCase())) {
    return false;
  }
  issues.push({
    type: 'bool_parsing',
    loc: ['query', name],
    msg: 'Input should be a valid boolean, unable to interpret input',
    input: raw,
  });
  return undefined;
}

function parseListQuery(query: URLSearchParams): ListQuery {
  const issues: ValidationIssue[] = [];
  let limit = DEFAULT_LIMIT;
  const rawLimit = query.get('limit');
  if (rawLimit !== null) {
    if (!/^-?\d+$/.test(rawLimit)) {
      issues.push({
        type: 'int_parsing',
        loc: ['query', 'limit'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: rawLimit,
      });
    } else if (Number(rawLimit) < 1) {
      issues.push({
        type: 'greater_than_equal',
        loc: ['query', 'limit'],
        msg: 'Input should be greater than or equal to 1',
        input: rawLimit,
      });
    } else {
      limit = Number(rawLimit);
    }
  }
  const order = query.get('order');
  if (order !== null && order !== 'asc' && order !== 'desc') {
    issues.push({
      type: 'literal_error',
      loc: ['query', 'order'],
      msg: "Input should be 'asc' or 'desc'",
      input: order,
    });
  }
  const orderBy = query.get('order_by');
  if (orderBy !== null && orderBy !== 'created_at' && orderBy !== 'last_run_completion') {
    issues.push({
      type: 'literal_error',
      loc: ['query', 'order_by'],
      msg: "Input should be 'created_at' or 'last_run_completion'",
      input: orderBy,
    });
  }
  const ascending = bool(query, 'ascending', issues);
  const matchAllTags = bool(query, 'match_all_tags', issues) ?? false;
  if (issues.length > 0) {
    throw apiErrors.invalid(issues);
  }
  const descending = order === null ? ascending !== true : order === 'desc';
  const out: ListQuery = { limit, descending, tags: query.getAll('tags'), matchAllTags };
  for (const [key, name] of [
    ['before', 'before'],
    ['after', 'after'],
    ['name', 'name'],
    ['queryText', 'query_text'],
  ] as const) {
    const value = query.get(name);
    if (value !== null && value !== '') {
      out[key] = value;
    }
  }
  return out;
}

function filtered(agents: AgentRecord[], q: ListQuery): AgentRecord[] {
  return agents.filter((a) => {
    if (q.name !== undefined && a.name !== q.name) {
      return false;
    }
    if (q.queryText !== undefined && !a.name.toLowerCase().includes(q.queryText.toLowerCase())) {
      return false;
    }
    if (q.tags.length > 0) {
      const has = (t: string) => a.tags.includes(t);
      return q.matchAllTags ? q.tags.every(has) : q.tags.some(has);
    }
    return true;
  });
}

const byCreation = (a: AgentRecord, b: AgentRecord): number =>
  a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);

export function listAgents(state: LettaState, organization: string, query: URLSearchParams): AgentRecord[] {
  const q = parseListQuery(query);
  const own = [...state.agents.values()].filter((a) => a.organization === organization);
  const direction = q.descending ? -1 : 1;
  const inOrder = (a: AgentRecord, b: AgentRecord) => direction * byCreation(a, b);
  const cursor = (id: string): AgentRecord => {
    const agent = state.visibleAgent(organization, id);
    if (!agent) {
      throw apiErrors.badRequest(`No Agent found with id ${id}`);
    }
    return agent;
  };
  const after = q.after === undefined ? undefined : cursor(q.after);
  const before = q.before === undefined ? undefined : cursor(q.before);
  const window = filtered(own, q)
    .filter(
      (a) =>
        (after === undefined || inOrder(a, after) > 0) && (before === undefined || inOrder(a, before) < 0),
    )
    .sort(inOrder);
  // With only `before`, the page is the one just before the cursor.
  return before !== undefined && after === undefined ? window.slice(-q.limit) : window.slice(0, q.limit);
}

/** The path's agent, if the caller's organization may see it; 404 otherwise. */
export function agentFor(state: LettaState, ctx: RequestContext): AgentRecord {
  const agentId = ctx.params.agentId ?? '';
  const agent = state.visibleAgent(ctx.organization, agentId);
  if (!agent) {
    throw apiErrors.agentNotFound(agentId);
  }
  return agent;
}

export function agentRoutes(state: LettaState): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/v1/agents/',
      op: 'agents.list',
      handler: (ctx) => json(listAgents(state, ctx.organization, ctx.query).map(renderAgent)),
    },
    {
      method: 'GET',
      pattern: '/v1/agents/:agentId',
      op: 'agents.retrieve',
      handler: (ctx) => json(renderAgent(agentFor(state, ctx))),
    },
  ];
}
