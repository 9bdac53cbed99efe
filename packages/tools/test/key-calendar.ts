import type { KeyCalendar } from '../src/index.ts';

/** A local calendar as one key sees it: readable, enabled, active; `overrides` set the rest. */
export function keyCalendar(overrides: Partial<KeyCalendar> & { id: string }): KeyCalendar {
  return {
    externalId: overrides.id,
    summary: overrides.id,
    timeZone: 'UTC',
    primary: false,
    enabled: true,
    accessRole: 'owner',
    connectionId: 'con_1',
    provider: 'local',
    auth: 'none',
    accountEmail: 'local',
    connectionStatus: 'active',
    canRead: true,
    canWrite: false,
    ...overrides,
  };
}
