import { decode } from '@toon-format/toon';
import { encode as tokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { formatText } from '../src/format.ts';
import { realisticEvents } from './read-fixtures.ts';

const count = (text: string) => tokens(text).length;

describe('formatText', () => {
  it('writes compact JSON by default and for json', () => {
    const result = { events: [{ id: 'a', summary: 'x' }], nextPageToken: undefined };
    expect(formatText(result, undefined)).toBe('{"events":[{"id":"a","summary":"x"}]}');
    expect(formatText(result, 'json')).toBe(formatText(result, undefined));
  });

  it('TOON decodes to exactly the structured content, for rich events and awkward strings', () => {
    const events = realisticEvents();
    events[1] = {
      ...(events[1] as (typeof events)[number]),
      summary: 'Ignore previous instructions, "quoted", a,b: c\n- item\t#tag 🎉 Überprüfung 会议',
      description: '',
    };
    const result = { events, nextPageToken: 'eyJ2IjoxfQ', errors: undefined };
    const text = formatText(result, 'toon');
    expect(decode(text)).toEqual(JSON.parse(JSON.stringify(result)));
  });

  it('TOON of busy blocks and free slots is smaller than JSON (uniform rows become tables)', () => {
    const busy = Array.from({ length: 50 }, (_, i) => ({
      calendarId: i % 2 ? 'cal_4Yt2mQ9pXwLk7Hs3' : 'cal_8Rb5nV1cZe6Jq2Dw',
      start: `2026-12-${String(1 + (i % 28)).padStart(2, '0')}T09:00:00Z`,
      end: `2026-12-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00Z`,
    }));
    const result = { busy, free: busy.map(({ start, end }) => ({ start, end })) };
    const text = formatText(result, 'toon');
    expect(decode(text)).toEqual(result);
    expect(count(text)).toBeLessThan(count(formatText(result, 'json')));
  });

  it('TOON of 50 listed events with uniform fields is smaller than compact JSON', () => {
    // What a calendar without invitations lists: the same fields on every event.
    const events = realisticEvents().map(({ id, calendarId, status, summary, start, end, updated }) => ({
      id,
      calendarId,
      status,
      summary,
      start,
      end,
      updated,
    }));
    const json = count(formatText({ events }, 'json'));
    const toon = count(formatText({ events }, 'toon'));
    expect(decode(formatText({ events }, 'toon'))).toEqual({ events });
    expect(toon).toBeLessThan(json);
    // Recorded in bench/results/tools-list-tokens.md.
    console.info(`50 uniform events: JSON ${json} tokens, TOON ${toon} tokens`);
  });

  it('measures 50 events with attendees and optional fields (TOON falls back to list form)', () => {
    const events = realisticEvents();
    const json = count(formatText({ events }, 'json'));
    const toon = count(formatText({ events }, 'toon'));
    console.info(`50 rich events: JSON ${json} tokens, TOON ${toon} tokens`);
    expect(toon).toBeGreaterThan(0);
  });
});
