import { isIP } from 'node:net';

/**
 * Fastify's `trustProxy` as TRUST_PROXY gives it: `true` (any proxy: only when nothing but the
 * proxy can reach the gateway), a number of proxy hops in front of the gateway, or the proxies'
 * addresses and CIDR ranges (also `loopback`, `linklocal`, `uniquelocal`). With it, `request.ip`
 * is the client's address taken from X-Forwarded-For, which the rate limits and the audit use.
 */
export type TrustProxy = boolean | number | string[];

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function validAddress(item: string): boolean {
  if (NAMED_RANGES.has(item)) {
    return true;
  }
  const [address = '', prefix, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) {
    return false;
  }
  if (prefix === undefined) {
    return true;
  }
  const bits = Number(prefix);
  return /^\d{1,3}$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
}

/** Parses TRUST_PROXY; the error names the first entry that is neither an address nor a range. */
export function parseTrustProxy(
  value: string,
): { ok: true; value: TrustProxy } | { ok: false; message: string } {
  const text = value.trim();
  if (text === 'true' || text === 'false') {
    return { ok: true, value: text === 'true' };
  }
  if (/^\d+$/.test(text)) {
    return { ok: true, value: Number(text) };
  }
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const wrong = items.find((item) => !validAddress(item));
  if (wrong !== undefined || items.length === 0) {
    return {
      ok: false,
      message: `'${wrong ?? text}' is not true, a number of proxy hops, or an IP address or CIDR range`,
    };
  }
  return { ok: true, value: items };
}

/**
 * The value for Fastify's option. Fastify accepts a hop count at run time but its types do not,
 * so hops become the function proxy-addr builds for them: trust the nearest `hops` addresses.
 */
export function fastifyTrustProxy(
  value: TrustProxy | undefined,
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (value === undefined) {
    return false;
  }
  if (typeof value === 'number') {
    return (_address, hop) => hop < value;
  }
  return value;
}
