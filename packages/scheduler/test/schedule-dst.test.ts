/**
 * Cron across DST changes: every job keeps its local schedule. A local time skipped by a
 * spring-forward gap runs once, at the first valid time after the gap; a local time repeated by a
 * fall-back overlap runs once, on its first pass.
 */
import { describe, expect, it } from 'vitest';
import { runs } from './schedule-support.ts';

const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';

describe('US spring forward (America/New_York, 2026-03-08, 02:00 EST → 03:00 EDT)', () => {
  const after = '2026-03-08T00:30:00-05:00';

  it('hourly skips the missing hour', () => {
    expect(runs('0 * * * *', NY, after, 4)).toEqual([
      '2026-03-08T01:00:00-05:00',
      '2026-03-08T03:00:00-04:00',
      '2026-03-08T04:00:00-04:00',
      '2026-03-08T05:00:00-04:00',
    ]);
  });

  it('daily at 02:30 runs once, at 03:00, then at 02:30 again', () => {
    expect(runs('30 2 * * *', NY, '2026-03-07T12:00:00-05:00', 3)).toEqual([
      '2026-03-08T03:00:00-04:00',
      '2026-03-09T02:30:00-04:00',
      '2026-03-10T02:30:00-04:00',
    ]);
  });

  it('every 15 minutes runs on the real clock, without the missing readings', () => {
    expect(runs('*/15 * * * *', NY, '2026-03-08T01:20:00-05:00', 4)).toEqual([
      '2026-03-08T01:30:00-05:00',
      '2026-03-08T01:45:00-05:00',
      '2026-03-08T03:00:00-04:00',
      '2026-03-08T03:15:00-04:00',
    ]);
  });

  it('01:30 is untouched; 02:30 and 02:00/02:45 collapse into one run at 03:00', () => {
    expect(runs('30 1 * * *', NY, '2026-03-07T12:00:00-05:00', 2)).toEqual([
      '2026-03-08T01:30:00-05:00',
      '2026-03-09T01:30:00-04:00',
    ]);
    expect(runs('0,45 2 * * *', NY, '2026-03-07T12:00:00-05:00', 3)).toEqual([
      '2026-03-08T03:00:00-04:00',
      '2026-03-09T02:00:00-04:00',
      '2026-03-09T02:45:00-04:00',
    ]);
    // A fixed 03:00 job and the displaced 02:30 one share the instant.
    expect(runs('30 2,3 * * *', NY, '2026-03-07T12:00:00-05:00', 3)).toEqual([
      '2026-03-08T03:00:00-04:00',
      '2026-03-08T03:30:00-04:00',
      '2026-03-09T02:30:00-04:00',
    ]);
  });

  it('a job restricted to the missing hour runs once that day, at the end of the gap', () => {
    expect(runs('*/30 2 * * *', NY, after, 3)).toEqual([
      '2026-03-08T03:00:00-04:00',
      '2026-03-09T02:00:00-04:00',
      '2026-03-09T02:30:00-04:00',
    ]);
  });
});

describe('US fall back (America/New_York, 2026-11-01, 02:00 EDT → 01:00 EST)', () => {
  const after = '2026-11-01T00:30:00-04:00';

  it('hourly runs 01:00 once, on the first pass', () => {
    expect(runs('0 * * * *', NY, after, 4)).toEqual([
      '2026-11-01T01:00:00-04:00',
      '2026-11-01T02:00:00-05:00',
      '2026-11-01T03:00:00-05:00',
      '2026-11-01T04:00:00-05:00',
    ]);
  });

  it('daily at 02:30 is unaffected', () => {
    expect(runs('30 2 * * *', NY, '2026-10-31T12:00:00-04:00', 2)).toEqual([
      '2026-11-01T02:30:00-05:00',
      '2026-11-02T02:30:00-05:00',
    ]);
  });

  it('every 15 minutes does not repeat the readings of the repeated hour', () => {
    expect(runs('*/15 * * * *', NY, '2026-11-01T01:40:00-04:00', 6)).toEqual([
      '2026-11-01T01:45:00-04:00',
      '2026-11-01T02:00:00-05:00',
      '2026-11-01T02:15:00-05:00',
      '2026-11-01T02:30:00-05:00',
      '2026-11-01T02:45:00-05:00',
      '2026-11-01T03:00:00-05:00',
    ]);
  });

  it('daily at 01:30 runs once, on the first pass', () => {
    expect(runs('30 1 * * *', NY, '2026-10-31T12:00:00-04:00', 2)).toEqual([
      '2026-11-01T01:30:00-04:00',
      '2026-11-02T01:30:00-05:00',
    ]);
    // Asked during the repeated hour, after the first pass: the next run is the next day.
    expect(runs('30 1 * * *', NY, '2026-11-01T01:10:00-05:00', 1)).toEqual(['2026-11-02T01:30:00-05:00']);
    expect(runs('30 1 * * *', NY, '2026-11-01T01:50:00-04:00', 1)).toEqual(['2026-11-02T01:30:00-05:00']);
  });

  it('asked during the first pass, an hourly job does not come back in the second', () => {
    expect(runs('30 * * * *', NY, '2026-11-01T01:45:00-04:00', 2)).toEqual([
      '2026-11-01T02:30:00-05:00',
      '2026-11-01T03:30:00-05:00',
    ]);
    expect(runs('30 * * * *', NY, '2026-11-01T01:40:00-05:00', 1)).toEqual(['2026-11-01T02:30:00-05:00']);
  });
});

describe('EU spring forward (Europe/Berlin, 2026-03-29, 02:00 CET → 03:00 CEST)', () => {
  it('hourly skips the missing hour', () => {
    expect(runs('0 * * * *', BERLIN, '2026-03-29T00:30:00+01:00', 3)).toEqual([
      '2026-03-29T01:00:00+01:00',
      '2026-03-29T03:00:00+02:00',
      '2026-03-29T04:00:00+02:00',
    ]);
  });

  it('daily at 02:30 runs at 03:00 that day', () => {
    expect(runs('30 2 * * *', BERLIN, '2026-03-28T12:00:00+01:00', 3)).toEqual([
      '2026-03-29T03:00:00+02:00',
      '2026-03-30T02:30:00+02:00',
      '2026-03-31T02:30:00+02:00',
    ]);
  });

  it('every 15 minutes jumps from 01:45 to 03:00', () => {
    expect(runs('*/15 * * * *', BERLIN, '2026-03-29T01:40:00+01:00', 3)).toEqual([
      '2026-03-29T01:45:00+01:00',
      '2026-03-29T03:00:00+02:00',
      '2026-03-29T03:15:00+02:00',
    ]);
  });

  it('01:30 is untouched', () => {
    expect(runs('30 1 * * *', BERLIN, '2026-03-28T12:00:00+01:00', 2)).toEqual([
      '2026-03-29T01:30:00+01:00',
      '2026-03-30T01:30:00+02:00',
    ]);
  });
});

describe('EU fall back (Europe/Berlin, 2026-10-25, 03:00 CEST → 02:00 CET)', () => {
  it('hourly runs 02:00 once, on the first pass', () => {
    expect(runs('0 * * * *', BERLIN, '2026-10-25T01:30:00+02:00', 4)).toEqual([
      '2026-10-25T02:00:00+02:00',
      '2026-10-25T03:00:00+01:00',
      '2026-10-25T04:00:00+01:00',
      '2026-10-25T05:00:00+01:00',
    ]);
  });

  it('daily at 02:30 runs once, on the first pass', () => {
    expect(runs('30 2 * * *', BERLIN, '2026-10-24T12:00:00+02:00', 3)).toEqual([
      '2026-10-25T02:30:00+02:00',
      '2026-10-26T02:30:00+01:00',
      '2026-10-27T02:30:00+01:00',
    ]);
  });

  it('every 15 minutes runs the repeated hour once', () => {
    const out = runs('*/15 * * * *', BERLIN, '2026-10-25T01:50:00+02:00', 6);
    expect(out).toEqual([
      '2026-10-25T02:00:00+02:00',
      '2026-10-25T02:15:00+02:00',
      '2026-10-25T02:30:00+02:00',
      '2026-10-25T02:45:00+02:00',
      '2026-10-25T03:00:00+01:00',
      '2026-10-25T03:15:00+01:00',
    ]);
  });

  it('01:30 is untouched', () => {
    expect(runs('30 1 * * *', BERLIN, '2026-10-24T12:00:00+02:00', 2)).toEqual([
      '2026-10-25T01:30:00+02:00',
      '2026-10-26T01:30:00+01:00',
    ]);
  });
});

describe('a half-hour DST shift (Australia/Lord_Howe, +10:30 / +11:00)', () => {
  it('spring forward on 2026-10-04: 02:15 runs at 02:30, every 15 minutes skips 02:00 and 02:15', () => {
    expect(runs('15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T12:00:00+10:30', 2)).toEqual([
      '2026-10-04T02:30:00+11:00',
      '2026-10-05T02:15:00+11:00',
    ]);
    expect(runs('*/15 * * * *', 'Australia/Lord_Howe', '2026-10-04T01:40:00+10:30', 3)).toEqual([
      '2026-10-04T01:45:00+10:30',
      '2026-10-04T02:30:00+11:00',
      '2026-10-04T02:45:00+11:00',
    ]);
  });

  it('fall back on 2026-04-05: 01:45 runs once; every 15 minutes runs the repeated half hour once', () => {
    expect(runs('45 1 * * *', 'Australia/Lord_Howe', '2026-04-04T12:00:00+11:00', 2)).toEqual([
      '2026-04-05T01:45:00+11:00',
      '2026-04-06T01:45:00+10:30',
    ]);
    expect(runs('*/15 * * * *', 'Australia/Lord_Howe', '2026-04-05T01:20:00+11:00', 6)).toEqual([
      '2026-04-05T01:30:00+11:00',
      '2026-04-05T01:45:00+11:00',
      '2026-04-05T02:00:00+10:30',
      '2026-04-05T02:15:00+10:30',
      '2026-04-05T02:30:00+10:30',
      '2026-04-05T02:45:00+10:30',
    ]);
  });
});
