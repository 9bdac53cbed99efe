/** The JSON body of a due prompt, as a webhook target receives it. */
export interface PromptDuePayload {
  type: 'prompt.due';
  scheduleId: string;
  /** The scheduled instant of this occurrence, RFC 3339 in UTC. */
  occurrence: string;
  prompt: string;
  agentId?: string;
  /** 1 for the first occurrence of the schedule. */
  repetition: number;
}

export function promptDuePayload(input: {
  scheduleId: string;
  occurrence: Date;
  prompt: string;
  agentId?: string | null;
  repetition: number;
}): PromptDuePayload {
  return {
    type: 'prompt.due',
    scheduleId: input.scheduleId,
    occurrence: input.occurrence.toISOString(),
    prompt: input.prompt,
    ...(input.agentId ? { agentId: input.agentId } : {}),
    repetition: input.repetition,
  };
}
