import { CalgateError } from '@calgate/core';
import { checkTargetUrl, parseTargetUrl, testDeliveryTarget } from '@calgate/scheduler';
import {
  type Database,
  DeliveryTargetRepository,
  type NewTarget,
  type TargetRecord,
  TenancyRepository,
} from '@calgate/store';
import type { Config } from '../config.ts';
import { loadSecretBox } from '../runtime.ts';
import { type Io, print, resolveTenant, UsageError, type Values } from './common.ts';

/** `calgate target create|list|delete|test`: the delivery targets of scheduled prompts. */
export async function targetCommand(
  db: Database,
  config: Config,
  embedded: boolean,
  io: Io,
  command: string,
  values: Values,
): Promise<void> {
  const tenantId = await resolveTenant(new TenancyRepository(db.prisma), values);
  const targets = new DeliveryTargetRepository(db, await loadSecretBox(config, embedded));
  const allowPrivate = config.scheduler.allowPrivateTargets;
  switch (command) {
    case 'target create': {
      const input = newTarget(values);
      await refuseUnsafeUrl(input.url, allowPrivate);
      const { target, secret } = await targets.create(tenantId, input);
      if (target.kind === 'webhook') {
        print(
          io,
          values.json,
          { id: target.id, secret },
          `Created webhook target ${target.id} (${target.name}).\nSigning secret (shown only now): ${secret}\nReceivers verify the webhook-signature header with it (Standard Webhooks). Try it: calgate target test --target ${target.id}`,
        );
      } else {
        const agent = target.defaultAgentId ? `, default agent ${target.defaultAgentId}` : '';
        print(
          io,
          values.json,
          { id: target.id },
          `Created Letta target ${target.id} (${target.name}${agent}). Try it: calgate target test --target ${target.id}`,
        );
      }
      return;
    }
    case 'target list': {
      const list = (await targets.list(tenantId)).map(summary);
      print(
        io,
        values.json,
        list,
        list
          .map(
            (t) =>
              `${t.id}  ${t.kind}  ${t.name}  ${t.origin}${t.defaultAgentId ? `  default agent ${t.defaultAgentId}` : ''}${t.disabled ? `  DISABLED ${t.disabledAt}: ${t.disabledReason ?? 'no reason given'}` : ''}`,
          )
          .join('\n') || 'No delivery targets.',
      );
      return;
    }
    case 'target delete': {
      const targetId = targetOption(values);
      await targets.delete(tenantId, targetId);
      print(io, values.json, { id: targetId, deleted: true }, `Deleted delivery target ${targetId}.`);
      return;
    }
    case 'target test': {
      const { target, secret } = await targets.openSecret(tenantId, targetOption(values));
      const result = await testDeliveryTarget(
        {
          id: target.id,
          kind: target.kind,
          url: target.url,
          secret: secret.reveal(),
          defaultAgentId: target.defaultAgentId,
        },
        { allowPrivate },
      );
      const what = target.kind === 'webhook' ? 'a signed target.test event' : 'listing its agents';
      const status = result.status === null ? 'no answer' : `status ${result.status}`;
      const disabled = target.disabledAt ? ` (the target is disabled: ${target.disabledReason ?? ''})` : '';
      print(
        io,
        values.json,
        result,
        `${result.ok ? 'OK' : 'FAILED'}: ${target.id} by ${what}, ${status}, ${result.durationMs} ms${disabled}.`,
      );
      if (!result.ok) {
        // Exit 1, with the reason on stderr; stdout keeps the result.
        throw new CalgateError('upstream_unavailable', result.error ?? `Testing ${target.id} failed.`);
      }
      return;
    }
    default:
      throw new UsageError(`Unknown command '${command}'.`);
  }
}

/** What `target list` shows: never the URL's path or query (they may carry a token) nor a secret. */
function summary(target: TargetRecord) {
  return {
    id: target.id,
    kind: target.kind,
    name: target.name,
    origin: originOf(target.url),
    defaultAgentId: target.defaultAgentId,
    disabled: target.disabledAt !== null,
    disabledAt: target.disabledAt?.toISOString() ?? null,
    disabledReason: target.disabledReason,
    createdAt: target.createdAt.toISOString(),
  };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

function option(values: Values, name: 'kind' | 'url' | 'api-key' | 'target' | 'name'): string {
  const value = values[name]?.trim();
  if (value === undefined || value === '') {
    throw new UsageError(`--${name} is required.`);
  }
  return value;
}

function targetOption(values: Values): string {
  return option(values, 'target');
}

function newTarget(values: Values): NewTarget {
  const kind = values.kind?.trim();
  if (kind !== 'webhook' && kind !== 'letta') {
    throw new UsageError(
      kind === undefined || kind === ''
        ? '--kind is required: webhook or letta.'
        : `--kind must be webhook or letta, not '${kind}'.`,
    );
  }
  const name = option(values, 'name');
  const url = option(values, 'url');
  if (kind === 'webhook') {
    if (values['api-key'] !== undefined || values['default-agent'] !== undefined) {
      throw new UsageError(
        '--api-key and --default-agent are for --kind letta; a webhook is signed instead.',
      );
    }
    return { kind, name, url };
  }
  const defaultAgent = values['default-agent']?.trim();
  if (defaultAgent === '') {
    throw new UsageError('--default-agent needs a Letta agent id (agent-…).');
  }
  return {
    kind,
    name,
    url,
    apiKey: option(values, 'api-key'),
    ...(defaultAgent === undefined ? {} : { defaultAgentId: defaultAgent }),
  };
}

/**
 * The SSRF policy deliveries apply, with this process's own OUTBOUND_ALLOW_PRIVATE, checked now so
 * that a target that could never work is not stored. Where the URL points is checked before its
 * scheme, so that `http://localhost:…` hears about the setting rather than only about https.
 */
async function refuseUnsafeUrl(url: string, allowPrivate: boolean): Promise<void> {
  const refuse = (error: CalgateError) =>
    new CalgateError(error.code, `Cannot add this target: ${error.message}.`, { context: error.context });
  const reachable = await checkTargetUrl(url, { allowPrivate, requireHttps: false });
  if (!reachable.ok) {
    throw refuse(reachable.error);
  }
  const scheme = parseTargetUrl(url, { allowPrivate });
  if (!scheme.ok) {
    throw refuse(scheme.error);
  }
}
