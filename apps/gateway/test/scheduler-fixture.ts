/**
 * Scheduled prompts in gateway tests: the settings of a gateway that delivers them itself (its
 * worker in process, loopback targets allowed), and a real webhook receiver registered as the
 * tenant's target "hook", verifying the Standard Webhooks signature with the target's secret.
 */
import { type Receiver, startReceiver } from '@calgate/testkit';
import { HIGH_RATE_LIMITS, type TestGateway } from './harness.ts';

export const SCHEDULER_ENV = {
  ...HIGH_RATE_LIMITS,
  TARGETS_ALLOW_PRIVATE: 'true',
  WORKER_IN_PROCESS: 'true',
};

/** A key's toolsets for scheduling prompts about its calendars. */
export const SCHEDULER_TOOLSETS = { toolsets: ['calendar', 'scheduler'] };

/** Starts a receiver and registers it as the tenant's webhook target named "hook". */
export async function startWebhookReceiver(gw: TestGateway, tenantId: string): Promise<Receiver> {
  let secret = '';
  const receiver = await startReceiver(() => secret);
  const hook = await gw.runtime.scheduler.targets.create(tenantId, {
    kind: 'webhook',
    name: 'hook',
    url: receiver.url,
  });
  secret = hook.secret ?? '';
  return receiver;
}
