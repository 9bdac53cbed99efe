import { describe, expect, it } from 'vitest';
import { ianaZoneFor, windowsZoneFor, windowsZoneNames } from '../../src/microsoft/zones.ts';

function value<T>(result: { ok: true; value: T } | { ok: false; error: Error }): T {
  if (!result.ok) {
    throw result.error;
  }
  return result.value;
}

describe('windowsZoneFor (what Graph is sent)', () => {
  it('names the Windows zone of IANA zones, including those Graph refuses by their IANA name', () => {
    expect(value(windowsZoneFor('Europe/Berlin'))).toBe('W. Europe Standard Time');
    expect(value(windowsZoneFor('Europe/Amsterdam'))).toBe('W. Europe Standard Time');
    expect(value(windowsZoneFor('America/New_York'))).toBe('Eastern Standard Time');
    expect(value(windowsZoneFor('America/Los_Angeles'))).toBe('Pacific Standard Time');
    expect(value(windowsZoneFor('Asia/Tokyo'))).toBe('Tokyo Standard Time');
    expect(value(windowsZoneFor('Asia/Kathmandu'))).toBe('Nepal Standard Time');
    expect(value(windowsZoneFor('Australia/Lord_Howe'))).toBe('Lord Howe Standard Time');
    expect(value(windowsZoneFor('Europe/London'))).toBe('GMT Standard Time');
  });

  it('knows current names and their older aliases alike', () => {
    expect(value(windowsZoneFor('Asia/Kolkata'))).toBe('India Standard Time');
    expect(value(windowsZoneFor('Asia/Calcutta'))).toBe('India Standard Time');
    expect(value(windowsZoneFor('Europe/Kyiv'))).toBe('FLE Standard Time');
    expect(value(windowsZoneFor('Europe/Kiev'))).toBe('FLE Standard Time');
    expect(value(windowsZoneFor('America/Nuuk'))).toBe(value(windowsZoneFor('America/Godthab')));
    expect(value(windowsZoneFor('Asia/Ho_Chi_Minh'))).toBe('SE Asia Standard Time');
  });

  it('sends UTC as UTC, and fixed offsets by their Windows names', () => {
    for (const zone of ['UTC', 'Etc/UTC', 'Etc/GMT']) {
      expect(value(windowsZoneFor(zone))).toBe('UTC');
    }
    expect(value(windowsZoneFor('Etc/GMT+2'))).toBe('UTC-02');
    expect(value(windowsZoneFor('Etc/GMT-12'))).toBe('UTC+12');
  });

  it('refuses a zone that has no Windows equivalent, saying so, and an unknown zone as core does', () => {
    const troll = windowsZoneFor('Antarctica/Troll');
    expect(troll.ok).toBe(false);
    if (!troll.ok) {
      expect(troll.error.code).toBe('invalid_argument');
      expect(troll.error.message).toMatch(/^Time zone 'Antarctica\/Troll' has no Windows equivalent/);
    }
    const unknown = windowsZoneFor('Mars/Olympus_Mons');
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) {
      expect(unknown.error.message).toMatch(/Unknown time zone 'Mars\/Olympus_Mons'/);
    }
  });

  it('maps every zone this runtime knows but a handful (CLDR covers them)', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    const missing = zones.filter((zone) => !windowsZoneFor(zone).ok);
    expect(missing.length).toBeLessThanOrEqual(3);
    expect(missing.every((zone) => zone.includes('/'))).toBe(true);
  });
});

describe('ianaZoneFor (what Graph answered)', () => {
  it('reads Windows names, in any case', () => {
    expect(value(ianaZoneFor('W. Europe Standard Time'))).toBe('Europe/Berlin');
    expect(value(ianaZoneFor('w. europe standard time'))).toBe('Europe/Berlin');
    expect(value(ianaZoneFor('Pacific Standard Time'))).toBe('America/Los_Angeles');
    expect(value(ianaZoneFor('India Standard Time'))).toMatch(/^Asia\/(Calcutta|Kolkata)$/);
    expect(value(ianaZoneFor('UTC-02'))).toBe('Etc/GMT+2');
  });

  it('reads the IANA names Graph also uses, and every spelling of UTC', () => {
    expect(value(ianaZoneFor('Europe/Paris'))).toBe('Europe/Paris');
    expect(value(ianaZoneFor('America/Indiana/Indianapolis'))).toBe('America/Indiana/Indianapolis');
    for (const name of ['UTC', 'Etc/UTC', 'Etc/GMT', 'tzone://Microsoft/Utc']) {
      expect(value(ianaZoneFor(name))).toBe('UTC');
    }
  });

  it('refuses custom and unknown zones with a sentence saying what it expected', () => {
    const custom = ianaZoneFor('tzone://Microsoft/Custom');
    expect(custom.ok).toBe(false);
    if (!custom.ok) {
      expect(custom.error.message).toMatch(/custom time zone/);
    }
    const unknown = ianaZoneFor('Atlantis Standard Time');
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) {
      expect(unknown.error.code).toBe('invalid_argument');
      expect(unknown.error.message).toBe(
        "Time zone 'Atlantis Standard Time' is neither a Windows time zone name (e.g. 'W. Europe Standard Time') nor an IANA zone (e.g. 'Europe/Berlin').",
      );
    }
  });

  it('round-trips every Windows zone: Windows → IANA → the same Windows zone', () => {
    const names = windowsZoneNames();
    expect(names.length).toBeGreaterThan(130);
    const drifted = names.filter((name) => value(windowsZoneFor(value(ianaZoneFor(name)))) !== name);
    expect(drifted).toEqual([]);
  });
});
