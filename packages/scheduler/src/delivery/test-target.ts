import { randomBytes } from 'node:crypto';
import { LETTA_AGENT_LIST_CAP, listLettaAgents } from './letta.ts';
import { sendWebhook, type WebhookSenderOptions } from './webhook.ts';

/** A delivery target with its opened secret, as `testDeliveryTarget` needs it. */
export interface TestableTarget {
  id: string;
  kind: 'webhook' | 'letta';
  url: string;
  /** A webhook's `whsec_` secret, or a Letta target's API key. */
  secret: string;
  defaultAgentId: string | null;
}

/** The body of a test webhook: nothing to act on, only proof that the target receives. */
export interface TargetTestPayload {
  type: 'target.test';
  targetId: string;
  /** RFC 3339, UTC. */
  sentAt: string;
}

export interface TargetTestResult {
  targetId: string;
  ok: boolean;
  /** The HTTP status the target answered, `null` when it never did. */
  status: number | null;
  durationMs: number;
  /** What went wrong, without the URL or a secret; `null` when `ok`. */
  error: string | null;
}

/**
 * Tries a target the way a delivery would, once, without retrying. A webhook gets a signed
 * Standard Webhooks POST of `{type: "target.test", targetId, sentAt}` with `webhook-id`
 * `test_<random>` (receivers should acknowledge it with 2xx and ignore it). A Letta target gets
 * its agents listed: ok when the key is accepted and, when the target names a default agent, that
 * agent is among them. The SSRF policy applies exactly as for deliveries.
 */
export async function testDeliveryTarget(
  target: TestableTarget,
  options: WebhookSenderOptions,
): Promise<TargetTestResult> {
  const started = performance.now();
  const result = (ok: boolean, status: number | null, error: string | null): TargetTestResult => ({
    targetId: target.id,
    ok,
    status,
    durationMs: Math.round(performance.now() - started),
    error,
  });

  if (target.kind === 'webhook') {
    const payload: TargetTestPayload = {
      type: 'target.test',
      targetId: target.id,
      sentAt: (options.now?.() ?? new Date()).toISOString(),
    };
    const outcome = await sendWebhook(
      {
        targetId: target.id,
        url: target.url,
        secret: target.secret,
        messageId: `test_${randomBytes(12).toString('hex')}`,
        payload,
      },
      options,
    );
    return outcome.kind === 'delivered'
      ? result(true, outcome.status, null)
      : result(false, outcome.status, outcome.error.message);
  }

  const listed = await listLettaAgents(
    { targetId: target.id, baseUrl: target.url, apiKey: target.secret },
    options,
  );
  if (!listed.ok) {
    const status = listed.error.context.status;
    return result(false, typeof status === 'number' ? status : null, listed.error.message);
  }
  const agentId = target.defaultAgentId;
  const agents = listed.value;
  // Past the listing cap the agent may exist unseen, so only a complete list can prove it missing.
  if (agentId && agents.length < LETTA_AGENT_LIST_CAP && !agents.some((a) => a.id === agentId)) {
    return result(
      false,
      200,
      `Letta agent ${agentId}, the target's default agent, was not found at target ${target.id} (the key sees ${agents.length} agent${agents.length === 1 ? '' : 's'})`,
    );
  }
  return result(true, 200, null);
}
