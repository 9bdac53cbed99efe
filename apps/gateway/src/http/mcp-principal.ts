/** The caller of an MCP request as the tools see it, from its key. */
import type { KeyAccess } from '@calgate/store';
import type { Principal } from '@calgate/tools';

/** The caller as the tools see it: the key's grants, default calendar and time zone. */
export function principalOf(key: KeyAccess): Principal {
  return {
    tenantId: key.tenantId,
    keyId: key.keyId,
    calendars: key.calendars,
    defaultCalendarId: key.defaultCalendarId,
    timeZone: key.timeZone,
    workspaceTimeZone: key.workspaceTimeZone,
    toolsets: key.toolsets,
    app: key.kind === 'oauth',
    tenantAddresses: key.tenantAddresses,
    hijackPolicy: key.hijackPolicy,
  };
}
