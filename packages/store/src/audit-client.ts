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
