import { describe, expect, it } from 'vitest';
import { decodeDocumentId, encodeDocumentId } from '../src/search-ids.ts';

describe('search/fetch document ids', () => {
  it('round-trip a calendar id and an event id, including a recurring occurrence', () => {
    for (const eventId of ['abc123def456', '5qk3b0c8e1g2h3i4j5k6l7m8n9_20261201T090000Z', 'a:b']) {
      const id = encodeDocumentId({ calendarId: 'cal_4Yt2mQ9pXw', eventId });
      expect(decodeDocumentId(id)).toEqual({ calendarId: 'cal_4Yt2mQ9pXw', eventId });
    }
  });

  it('are the same for the same event every time and differ across calendars', () => {
    const a = encodeDocumentId({ calendarId: 'cal_a1', eventId: 'e1' });
    expect(encodeDocumentId({ calendarId: 'cal_a1', eventId: 'e1' })).toBe(a);
    expect(encodeDocumentId({ calendarId: 'cal_b2', eventId: 'e1' })).not.toBe(a);
  });

  it('refuse anything search does not issue', () => {
    for (const id of [
      '',
      'e1',
      ':e1',
      'cal_a1:',
      'primary:e1',
      'ann@example.com:e1',
      'cal_a1:e 1',
      'cal_a1:../x',
    ]) {
      expect(decodeDocumentId(id)).toBeUndefined();
    }
  });
});
