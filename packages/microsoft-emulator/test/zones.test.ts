import { describe, expect, it } from 'vitest';
import { acceptZone, GRAPH_IANA_ZONES, windowsName } from '../src/index.ts';

describe('zones as Graph takes them', () => {
  it('takes every Windows name, computing in its CLDR zone', () => {
    expect(acceptZone('W. Europe Standard Time')).toEqual({
      name: 'W. Europe Standard Time',
      iana: 'Europe/Berlin',
    });
    expect(acceptZone('Pacific Standard Time')?.iana).toBe('America/Los_Angeles');
    expect(acceptZone('UTC')?.iana).toBe('UTC');
  });

  it("takes the IANA names on Graph's list and refuses the rest", () => {
    expect(GRAPH_IANA_ZONES.size).toBeGreaterThan(90);
    expect(acceptZone('Europe/Berlin')).toEqual({ name: 'Europe/Berlin', iana: 'Europe/Berlin' });
    expect(acceptZone('America/New_York')?.iana).toBe('America/New_York');
    expect(acceptZone('Europe/Amsterdam')).toBeUndefined();
    expect(acceptZone('Europe/Zurich')).toBeUndefined();
    expect(acceptZone('Mars/Olympus')).toBeUndefined();
  });

  it('names IANA zones the Windows way for mailboxSettings', () => {
    expect(windowsName('Europe/Amsterdam')).toBe('W. Europe Standard Time');
    expect(windowsName('America/New_York')).toBe('Eastern Standard Time');
    expect(windowsName('Asia/Kolkata')).toBe('India Standard Time');
    expect(windowsName('UTC')).toBe('UTC');
  });
});
