/** In-memory state: API keys, agents and the messages they received. */

export interface AgentRecord {
  id: string;
  name: string;
  organization: string;
  createdAt: string;
  updatedAt: string;
  description: string | null;
  tags: string[];
  model: string;
  timezone: string;
  metadata: Record<string, unknown> | null;
  reply: string | null;
  messageIds: string[];
  lastRunCompletion: string | null;
  lastStopReason: string | null;
}

/** A message an agent received through `POST /v1/agents/{agent_id}/messages`. */
export interface ReceivedMessage {
  id: string;
  agentId: string;
  runId: string;
  role: 'user' | 'system' | 'assistant';
  /** The text parts joined with newlines (or the string content as sent). */
  text: string;
  /** The content exactly as sent. */
  content: unknown;
  otid: string | null;
  at: string;
}

export class LettaState {
  readonly apiKeys = new Map<string, string>();
  readonly agents = new Map<string, AgentRecord>();
  readonly received: ReceivedMessage[] = [];
  readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  /** The organization a bearer key belongs to, or `undefined` for an unknown key. */
  organizationOf(apiKey: string): string | undefined {
    return this.apiKeys.get(apiKey);
  }

  /** The agent if it exists and the organization may see it. */
  visibleAgent(organization: string, agentId: string): AgentRecord | undefined {
    const agent = this.agents.get(agentId);
    return agent?.organization === organization ? agent : undefined;
  }

  clear(): void {
    this.apiKeys.clear();
    this.agents.clear();
    this.received.length = 0;
  }
}
