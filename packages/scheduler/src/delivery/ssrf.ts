import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { CalgateError, err, invalidArgument, ok, type Result } from '@calgate/core';
import { type AddressClass, classifyAddress, PRIVATE_ADDRESS_CLASSES } from './address.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (A and AAAA). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The setting that lets targets on private networks (and plain http) through, as refusals name it. */
export const PRIVATE_TARGETS_SETTING = 'TARGETS_ALLOW_PRIVATE=true (or OUTBOUND_ALLOW_PRIVATE=true)';

/**
 * A URL refused by the URL policy alone: another process with OUTBOUND_ALLOW_PRIVATE on would
 * accept it. A delivery refused so waits (`blocked`) rather than failing for good.
 */
export class TargetPolicyError extends CalgateError {
  override name = 'TargetPolicyError';
}

export interface TargetUrlPolicy {
  /**
   * Lets loopback, private, link-local, CGNAT, unspecified and reserved addresses through
   * (`OUTBOUND_ALLOW_PRIVATE=true`, alias `TARGETS_ALLOW_PRIVATE`). Cloud metadata, multicast and
   * broadcast addresses stay refused: no delivery target lives there.
   */
  allowPrivate: boolean;
  /**
   * Refuse `http:` URLs. Defaults to `!allowPrivate`: on the public internet a prompt travels
   * only over TLS; on a private network (or in tests) plain HTTP is accepted.
   */
  requireHttps?: boolean;
  /**
   * Accept `http:` only where every address is private or loopback (and so only with
   * `allowPrivate`): a URL that carries credentials (a CalDAV server's) never crosses the public
   * internet in clear, whatever `allowPrivate` says.
   */
  httpOnlyPrivate?: boolean;
  /** Defaults to `dns.lookup` with `all: true`, which is what a connection would use. */
  resolve?: HostResolver;
  /** How long a host name may take to resolve before the URL is refused (default 5 s). */
  resolveTimeoutMs?: number;
}

/** A URL that passed the check, with the addresses a connection may use. */
export interface CheckedTarget {
  url: URL;
  addresses: ResolvedAddress[];
}

const MAX_URL_LENGTH = 2048;
const RESOLVE_TIMEOUT_MS = 5_000;

export const systemResolver: HostResolver = async (hostname) => {
  const records = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return records.map((record) => ({ address: record.address, family: record.family === 6 ? 6 : 4 }));
};

function refused(host: string, address: string, kind: AddressClass, allowPrivate: boolean): CalgateError {
  const where = host === address ? `address ${address}` : `host ${host} resolves to ${address}, which`;
  const context = { host, address, addressClass: kind };
  const what = `target URL ${where} is ${describeAddressClass(kind)}`;
  if (PRIVATE_ADDRESS_CLASSES.has(kind) && !allowPrivate) {
    return new TargetPolicyError(
      'permission_denied',
      `${what}; Calgate refuses private targets unless ${PRIVATE_TARGETS_SETTING}`,
      { context },
    );
  }
  return new CalgateError('permission_denied', `${what}; no setting allows it`, { context });
}

/** An address class in words, for refusals ("a loopback address", "a cloud metadata address"). */
export function describeAddressClass(kind: AddressClass): string {
  switch (kind) {
    case 'cgnat':
      return 'a carrier-grade NAT address';
    case 'metadata':
      return 'a cloud metadata address';
    case 'unspecified':
      return 'the unspecified address';
    case 'reserved':
      return 'a reserved address';
    case 'broadcast':
      return 'the broadcast address';
    default:
      return `a ${kind} address`;
  }
}

function allowed(kind: AddressClass, allowPrivate: boolean): boolean {
  return kind === 'public' || (allowPrivate && PRIVATE_ADDRESS_CLASSES.has(kind));
}

/** Checks the URL's shape: scheme, credentials, length. Performs no I/O. */
export function parseTargetUrl(input: string, policy: TargetUrlPolicy): Result<URL, CalgateError> {
  if (input.length > MAX_URL_LENGTH) {
    return err(invalidArgument(`target URL is longer than ${MAX_URL_LENGTH} characters`));
  }
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return err(invalidArgument('target URL is not a valid absolute URL'));
  }
  const requireHttps = policy.requireHttps ?? !policy.allowPrivate;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return err(invalidArgument(`target URL must use https, not ${url.protocol.slice(0, -1)}`));
  }
  if (url.protocol === 'http:' && requireHttps) {
    return err(
      policy.allowPrivate
        ? invalidArgument('target URL must use https')
        : new TargetPolicyError(
            'invalid_argument',
            `target URL must use https; Calgate accepts plain http only when ${PRIVATE_TARGETS_SETTING}`,
          ),
    );
  }
  if (url.username !== '' || url.password !== '') {
    return err(invalidArgument('target URL must not contain credentials'));
  }
  return ok(url);
}

/**
 * Checks a delivery target URL and resolves its host. Refuses the URL when its host is, or
 * resolves to, any address outside the policy: one bad A/AAAA record is enough. Literal IPs in
 * any form WHATWG URL accepts (`2130706433`, `0x7f.1`, `[::ffff:127.0.0.1]`) are checked as the
 * address they normalise to. Connect only to the returned addresses (see `pinnedLookup`), so that
 * a second DNS answer cannot differ from the one checked.
 *
 * A resolution failure is `unavailable` with `retry: true`; a refusal is `permission_denied` or
 * `invalid_argument`.
 */
export async function checkTargetUrl(
  input: string,
  policy: TargetUrlPolicy,
): Promise<Result<CheckedTarget, CalgateError>> {
  // Where the URL points is checked before its scheme: `http://localhost:…` hears about the
  // private-network setting rather than only about https.
  const parsed = parseTargetUrl(input, { ...policy, requireHttps: false });
  if (!parsed.ok) {
    return parsed;
  }
  const url = parsed.value;
  const addresses = await vetAddresses(url, policy);
  const scheme = parseTargetUrl(input, policy);
  if (!addresses.ok) {
    // A refused address says more than the scheme; a passing DNS failure says less.
    return addresses.error.retry && !scheme.ok ? scheme : addresses;
  }
  if (url.protocol === 'http:' && policy.httpOnlyPrivate === true) {
    const open = addresses.value.find(({ address }) => classifyAddress(address) === 'public');
    if (open !== undefined) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const where =
        host === open.address
          ? `address ${host} is public`
          : `host ${host} resolves to ${open.address}, a public address`;
      return err(
        new CalgateError(
          'invalid_argument',
          `target URL must use https: ${where}, and Calgate sends plain http only to private or loopback addresses, with ${PRIVATE_TARGETS_SETTING}`,
          { context: { host, address: open.address } },
        ),
      );
    }
    return ok({ url, addresses: addresses.value });
  }
  if (!scheme.ok) {
    return scheme;
  }
  return ok({ url, addresses: addresses.value });
}

/** A lookup that takes longer than `ms` fails as `ETIMEOUT` (the system resolver has no deadline). */
async function resolveWithin(lookup: Promise<ResolvedAddress[]>, ms: number): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('lookup timed out'), { code: 'ETIMEOUT' })), ms);
  });
  try {
    return await Promise.race([lookup, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The addresses a URL's host is or resolves to, when every one of them is within the policy. */
async function vetAddresses(
  url: URL,
  policy: TargetUrlPolicy,
): Promise<Result<ResolvedAddress[], CalgateError>> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = classifyAddress(host);
  if (literal !== undefined) {
    if (!allowed(literal, policy.allowPrivate)) {
      return err(refused(host, host, literal, policy.allowPrivate));
    }
    return ok([{ address: host, family: host.includes(':') ? 6 : 4 }]);
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolveWithin(
      (policy.resolve ?? systemResolver)(host),
      policy.resolveTimeoutMs ?? RESOLVE_TIMEOUT_MS,
    );
  } catch (cause) {
    const code = (cause as { code?: unknown }).code;
    return err(
      new CalgateError('unavailable', `target host ${host} could not be resolved`, {
        retry: true,
        context: { host, ...(typeof code === 'string' ? { dnsCode: code } : {}) },
      }),
    );
  }
  if (addresses.length === 0) {
    return err(
      new CalgateError('unavailable', `target host ${host} has no addresses`, {
        retry: true,
        context: { host },
      }),
    );
  }
  for (const { address } of addresses) {
    const kind = classifyAddress(address) ?? 'reserved';
    if (!allowed(kind, policy.allowPrivate)) {
      return err(refused(host, address, kind, policy.allowPrivate));
    }
  }
  return ok(addresses);
}

/**
 * A `lookup` for `http.request`/`net.connect` that answers every host name with the vetted
 * addresses only, so the connection goes where `checkTargetUrl` looked.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family =
      options.family === 4 || options.family === 'IPv4'
        ? 4
        : options.family === 6 || options.family === 'IPv6'
          ? 6
          : 0;
    const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
    const first = usable[0];
    if (first === undefined) {
      const error: NodeJS.ErrnoException = new Error('no vetted address of the requested family');
      error.code = 'ENOTFOUND';
      callback(error, '');
      return;
    }
    if (options.all) {
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
      return;
    }
    callback(null, first.address, first.family);
  };
}
