/**
 * `POST /v1/agents/{agent_id}/messages`: validates the body as Letta's pydantic models do,
 * records what the agent received, and answers a non-streaming LettaResponse (the agent's
 * reasoning and assistant messages, the stop reason and usage).
 */
import { randomUUID } from 'node:crypto';
import { agentFor } from './agents.ts';
import { apiErrors, type ValidationIssue } from './errors.ts';
import { json, type Route } from './http.ts';
import type { LettaState, ReceivedMessage } from './state.ts';

type Role = ReceivedMessage['role'];
const ROLES: readonly Role[] = ['user', 'system', 'assistant'];

interface InboundMessage {
  role: Role;
  text: string;
  content: unknown;
  otid: string | null;
}

interface CreateBody {
  messages: InboundMessage[];
  returnTypes: string[] | null;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function contentText(content: unknown, loc: (string | number)[], issues: ValidationIssue[]): string {
  if (typeof content === 'string') {
    return content;
  }
  if (!Array.isArray(content)) {
    issues.push({ type: 'list_type', loc, msg: 'Input should be a valid list', input: content });
    return '';
  }
  const texts: string[] = [];
  content.forEach((part: unknown, i) => {
    const at = [...loc, i];
    if (!isObject(part)) {
      issues.push({ type: 'model_type', loc: at, msg: 'Input should be a valid dictionary', input: part });
    } else if (part.type !== 'text' && part.type !== undefined) {
      issues.push({
        type: 'union_tag_invalid',
        loc: at,
        msg: `Input tag '${String(part.type)}' found using 'type' does not match any of the expected tags: 'text'`,
        input: part,
      });
    } else if (typeof part.text !== 'string') {
      issues.push({
        type: part.text === undefined ? 'missing' : 'string_type',
        loc: [...at, 'text'],
        msg: part.text === undefined ? 'Field required' : 'Input should be a valid string',
        input: part.text === undefined ? part : part.text,
      });
    } else {
      texts.push(part.text);
    }
  });
  return texts.join('\n');
}

function parseMessage(raw: unknown, i: number, issues: ValidationIssue[]): InboundMessage | null {
  const loc = ['body', 'messages', i];
  if (!isObject(raw)) {
    issues.push({ type: 'model_type', loc, msg: 'Input should be a valid dictionary', input: raw });
    return null;
  }
  const before = issues.length;
  if (raw.role === undefined) {
    issues.push({ type: 'missing', loc: [...loc, 'role'], msg: 'Field required', input: raw });
  } else if (!ROLES.includes(raw.role as Role)) {
    issues.push({
      type: 'literal_error',
      loc: [...loc, 'role'],
      msg: "Input should be 'user', 'system' or 'assistant'",
      input: raw.role,
    });
  }
  let text = '';
  if (raw.content === undefined) {
    issues.push({ type: 'missing', loc: [...loc, 'content'], msg: 'Field required', input: raw });
  } else {
    text = contentText(raw.content, [...loc, 'content'], issues);
  }
  if (raw.otid !== undefined && raw.otid !== null && typeof raw.otid !== 'string') {
    issues.push({
      type: 'string_type',
      loc: [...loc, 'otid'],
      msg: 'Input should be a valid string',
      input: raw.otid,
    });
  }
  if (issues.length > before) {
    return null;
  }
  return {
    role: raw.role as Role,
    text,
    content: raw.content,
    otid: typeof raw.otid === 'string' ? raw.otid : null,
  };
}

function parseBody(body: unknown): CreateBody {
  if (!isObject(body)) {
    throw apiErrors.invalid([
      {
        type: body === undefined ? 'missing' : 'model_attributes_type',
        loc: ['body'],
        msg:
          body === undefined
            ? 'Field required'
            : 'Input should be a valid dictionary or object to extract fields from',
        input: body ?? null,
      },
    ]);
  }
  const issues: ValidationIssue[] = [];
  const messages: InboundMessage[] = [];
  if (body.messages !== undefined && body.messages !== null) {
    if (!Array.isArray(body.messages)) {
      issues.push({
        type: 'list_type',
        loc: ['body', 'messages'],
        msg: 'Input should be a valid list',
        input: body.messages,
      });
    } else {
      body.messages.forEach((raw: unknown, i) => {
        const message = parseMessage(raw, i, issues);
        if (message) {
          messages.push(message);
        }
      });
    }
  }
  if (body.input !== undefined && body.input !== null) {
    if (typeof body.input === 'string') {
      messages.push({ role: 'user', text: body.input, content: body.input, otid: null });
    } else {
      const text = contentText(body.input, ['body', 'input'], issues);
      messages.push({ role: 'user', text, content: body.input, otid: null });
    }
  }
  if (issues.length === 0 && messages.length === 0) {
    issues.push({
      type: 'missing',
      loc: ['body', 'messages'],
      msg: 'Field required: send at least one message in `messages` (or `input`)',
      input: body,
    });
  }
  let returnTypes: string[] | null = null;
  const types = body.include_return_message_types;
  if (Array.isArray(types) && types.every((t) => typeof t === 'string')) {
    returnTypes = types;
  } else if (types !== undefined && types !== null) {
    issues.push({
      type: 'list_type',
      loc: ['body', 'include_return_message_types'],
      msg: 'Input should be a valid list of message types',
      input: types,
    });
  }
  if (issues.length > 0) {
    throw apiErrors.invalid(issues);
  }
  if (body.streaming === true) {
    throw apiErrors.badRequest('This emulator answers only non-streaming requests; send streaming: false.');
  }
  return { messages, returnTypes };
}

const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

export function messageRoutes(state: LettaState): Route[] {
  return [
    {
      method: 'POST',
      pattern: '/v1/agents/:agentId/messages',
      op: 'messages.create',
      handler: (ctx) => {
        // FastAPI validates the body before the handler looks the agent up.
        const { messages, returnTypes } = parseBody(ctx.body);
        const agent = agentFor(state, ctx);
        const runId = `run-${randomUUID()}`;
        const stepId = `step-${randomUUID()}`;
        const date = new Date(state.now()).toISOString();
        for (const m of messages) {
          const id = `message-${randomUUID()}`;
          state.received.push({ id, agentId: agent.id, runId, ...m, at: date });
          agent.messageIds.push(id);
        }
        const prompt = messages.map((m) => m.text).join('\n');
        const reply = agent.reply ?? `Received: ${prompt}`;
        const common = {
          date,
          name: null,
          otid: null,
          sender_id: null,
          step_id: stepId,
          run_id: runId,
          is_err: null,
          seq_id: null,
        };
        const reasoning = 'A new message arrived; I will acknowledge it.';
        const out = [
          {
            id: `message-${randomUUID()}`,
            message_type: 'reasoning_message',
            reasoning,
            source: 'reasoner_model',
            signature: null,
            ...common,
          },
          { id: `message-${randomUUID()}`, message_type: 'assistant_message', content: reply, ...common },
        ];
        for (const m of out) {
          agent.messageIds.push(m.id);
        }
        agent.lastRunCompletion = date;
        agent.lastStopReason = 'end_turn';
        agent.updatedAt = date;
        const promptTokens = 2_000 + tokens(prompt);
        const completionTokens = tokens(reasoning) + tokens(reply);
        return json({
          messages: returnTypes === null ? out : out.filter((m) => returnTypes.includes(m.message_type)),
          stop_reason: { message_type: 'stop_reason', stop_reason: 'end_turn' },
          usage: {
            message_type: 'usage_statistics',
            completion_tokens: completionTokens,
            prompt_tokens: promptTokens,
            total_tokens: promptTokens + completionTokens,
            step_count: 1,
            run_ids: [runId],
            cached_input_tokens: null,
            cache_write_tokens: null,
            reasoning_tokens: null,
            context_tokens: null,
          },
        });
      },
    },
  ];
}
