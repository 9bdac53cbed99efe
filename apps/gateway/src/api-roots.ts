/**
 * The Google and Microsoft API roots an operator set, named by host name, looked up at start:
 * one that resolves to a loopback or private address is refused unless OUTBOUND_ALLOW_PRIVATE is
 * true, as `loadConfig` refuses such addresses written out (a cloud metadata address always).
 * A name that does not resolve now is left to the calls that use it, which say so; Microsoft's
 * own default roots are not looked up.
 */
import {
  type AddressClass,
  checkTargetUrl,
  classifyAddress,
  describeAddressClass,
  type HostResolver,
  PRIVATE_ADDRESS_CLASSES,
} from '@calgate/scheduler';
import { type Config, ConfigError } from './config.ts';

const DEFAULT_ROOTS = new Set(['https://graph.microsoft.com/v1.0', 'https://login.microsoftonline.com']);
const RESOLVE_TIMEOUT_MS = 3_000;

export async function checkApiRootHosts(config: Config, resolve?: HostResolver): Promise<void> {
  const roots: [string, string | undefined][] = [
    ['GOOGLE_API_ROOT_URL', config.google.apiRootUrl],
    ['GOOGLE_OAUTH_URL', config.google.oauthUrl],
    ['MICROSOFT_GRAPH_URL', config.microsoft.graphUrl],
    ['MICROSOFT_LOGIN_URL', config.microsoft.loginUrl],
  ];
  const allowPrivate = config.scheduler.allowPrivateTargets;
  const problems = await Promise.all(
    roots.map(async ([name, value]) => {
      if (value === undefined || DEFAULT_ROOTS.has(value)) {
        return undefined;
      }
      const host = new URL(value).hostname.replace(/^\[|\]$/g, '').toLowerCase();
      if (classifyAddress(host) !== undefined || host === 'localhost' || host.endsWith('.localhost')) {
        // Addresses written out were checked by loadConfig.
        return undefined;
      }
      const checked = await checkTargetUrl(value, {
        allowPrivate,
        requireHttps: false,
        resolveTimeoutMs: RESOLVE_TIMEOUT_MS,
        ...(resolve === undefined ? {} : { resolve }),
      });
      const context = checked.ok ? undefined : checked.error.context;
      const kind = context?.addressClass as AddressClass | undefined;
      if (kind === undefined) {
        return undefined;
      }
      const where = `${value}: ${host} resolves to ${String(context?.address)}, ${describeAddressClass(kind)}`;
      return PRIVATE_ADDRESS_CLASSES.has(kind)
        ? `${name}: ${where}; Calgate reaches loopback and private addresses only with OUTBOUND_ALLOW_PRIVATE=true (for an emulator in tests and demos).`
        : `${name}: ${where}, which Calgate never calls.`;
    }),
  );
  const refused = problems.filter((problem) => problem !== undefined);
  if (refused.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  ${refused.join('\n  ')}`);
  }
}
