import { isIP } from 'node:net';

/**
 * The client's name as an audit row keeps it: the first product token of a User-Agent
 * (`claude-code/1.2.3 (linux)` → `claude-code/1.2.3`), or null. Calgate serves MCP statelessly,
 * so a tool call cannot be tied to the clientInfo its client sent at initialize; the product
 * token is what every request carries. Only token characters are kept, and at most 100 of them.
 */
export function clientNameOf(userAgent: string | undefined): string | null {
  const token = userAgent
    ?.trim()
    .split(/\s+/)[0]
    ?.match(/^[!#$%&'*+.^_`|~0-9A-Za-z/-]+/)?.[0];
  return token === undefined || token === '' ? null : token.slice(0, 100);
}

/**
 * The client's address as an audit row keeps it: what Fastify's `request.ip` gives (the
 * X-Forwarded-For client when TRUST_PROXY trusts the hop, the connecting peer otherwise), an
 * IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, a dual-stack listener's view of an IPv4 client)
 * as plain IPv4 so one client reads the same either way, and anything that is not an IP address
 * (a proxy that forwarded garbage) as null.
 */
export function clientAddressOf(ip: string | undefined): string | null {
  if (ip === undefined) {
    return null;
  }
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip)?.[1];
  const address = mapped ?? ip;
  return isIP(address) === 0 ? null : address;
}
