/**
 * The streamed reading of iCalendar text that import_events uses: the index of UIDs by range,
 * read back per UID, gives the same resources as parsing the whole text (parseCalendarText),
 * whether the text is in memory or arrives as bytes cut anywhere (folded lines, CRLF split,
 * multi-byte characters split); structure errors are refused before anything is read.
 */
import {
  type IcsIndex,
  type IcsResource,
  indexText,
  indexZones,
  parseCalendarText,
  readUidResources,
  resourceMaster,
  SpooledFeed,
  textSource,
} from '@calgate/providers';
import { describe, expect, it } from 'vitest';

const CRLF = '\r\n';

const TEXT = [
  '\uFEFFBEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Test//EN',
  'BEGIN:VTIMEZONE',
  'TZID:Custom Zone',
  'BEGIN:STANDARD',
  'DTSTART:19700101T000000',
  'TZOFFSETFROM:+0300',
  'TZOFFSETTO:+0300',
  'END:STANDARD',
  'END:VTIMEZONE',
  'BEGIN:VEVENT',
  'UID:series@example.com',
  'DTSTART;TZID=Europe/Berlin:20260105T090000',
  'DTEND;TZID=Europe/Berlin:20260105T093000',
  'RRULE:FREQ=DAILY;COUNT=5',
  'SUMMARY:Standup — café',
  'BEGIN:VALARM',
  'UID:alarm-not-the-event',
  'ACTION:DISPLAY',
  'TRIGGER:-PT5M',
  'END:VALARM',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:a-very-long-uid-that-a-writer-folds-over-two-lines-because-it-passes-seventy-fiv',
  ' e-octets@example.com',
  'DTSTART:20260106T100000Z',
  'DURATION:PT1H',
  'DESCRIPTION:A long description folded over lines so that its continuation',
  '  starts with a space, and BEGIN:VEVENT inside text is not a component',
  'SUMMARY:Folded',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:custom@example.com',
  'DTSTART;TZID=Custom Zone:20260107T120000',
  'DTEND;TZID=Custom Zone:20260107T130000',
  'SUMMARY:In a custom zone',
  'END:VEVENT',
  'BEGIN:VTODO',
  'UID:todo@example.com',
  'SUMMARY:Not an event',
  'END:VTODO',
  'BEGIN:VEVENT',
  'UID:twice@example.com',
  'DTSTART;VALUE=DATE:20260108',
  'SUMMARY:First copy',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:series@example.com',
  'RECURRENCE-ID;TZID=Europe/Berlin:20260107T090000',
  'DTSTART;TZID=Europe/Berlin:20260107T140000',
  'DTEND;TZID=Europe/Berlin:20260107T143000',
  'SUMMARY:Standup (moved, far from its series)',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:twice@example.com',
  'DTSTART;VALUE=DATE:20260109',
  'SUMMARY:Second copy',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'DTSTART;VALUE=DATE:20260110',
  'SUMMARY:No UID',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join(CRLF);

/** What a resource says, comparable across parses. */
function shape(resource: IcsResource) {
  const master = resourceMaster(resource);
  return {
    uid: resource.uid,
    master: master === undefined ? null : [master.summary, master.start, master.end, master.recurrence ?? []],
    overrides: resource.overrides.map((o) => [
      o.getFirstPropertyValue('summary'),
      String(o.getFirstPropertyValue('recurrence-id')),
    ]),
  };
}

async function streamed(index: IcsIndex, source: Parameters<typeof readUidResources>[2]) {
  const { root, zones } = await indexZones(index, source, 'Europe/Berlin');
  const out: IcsResource[] = [];
  for (const [uid, entry] of index.uids) {
    out.push(...(await readUidResources(uid, entry, source, root, zones)));
  }
  return out.map(shape);
}

function wholeParse(text: string) {
  const parsed = parseCalendarText(text, 'Europe/Berlin');
  // parseCalendarText puts a repeated master at the end and groups UID-less events under ''.
  return parsed.resources.filter((r) => r.uid !== '').map(shape);
}

const byUid = (list: ReturnType<typeof shape>[]) =>
  [...list].sort((a, b) => a.uid.localeCompare(b.uid) || JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('streamed iCalendar index', () => {
  it('indexes every UID once, with its overrides wherever they stand, and the line of its UID', () => {
    const index = indexText(TEXT);
    expect([...index.uids.keys()]).toEqual([
      'series@example.com',
      'a-very-long-uid-that-a-writer-folds-over-two-lines-because-it-passes-seventy-five-octets@example.com',
      'custom@example.com',
      'twice@example.com',
    ]);
    expect(index.uids.get('series@example.com')?.ranges).toHaveLength(4);
    expect(index.uids.get('series@example.com')?.line).toBe(13);
    expect(index.missingUid).toEqual([60]);
    expect(index.zoneRanges).toHaveLength(2);
  });

  it('gives the same resources as parsing the whole text', async () => {
    const expected = byUid(wholeParse(TEXT));
    expect(expected).toHaveLength(5);
    expect(byUid(await streamed(indexText(TEXT), textSource(TEXT)))).toEqual(expected);
  });

  it('gives the same resources from bytes cut anywhere, spooled to a file', async () => {
    const bytes = Buffer.from(TEXT, 'utf8');
    const expected = byUid(wholeParse(TEXT));
    for (const size of [1, 2, 3, 7, 64, bytes.length]) {
      const feed = new SpooledFeed();
      await feed.open();
      try {
        for (let at = 0; at < bytes.length; at += size) {
          await feed.write(bytes.subarray(at, at + size));
        }
        const index = feed.finish();
        expect(byUid(await streamed(index, feed)), `chunks of ${size}`).toEqual(expected);
      } finally {
        await feed.close();
      }
    }
  });

  it('a text with LF alone and no final line break reads the same', async () => {
    const lf = TEXT.replaceAll(CRLF, '\n').trimEnd();
    const feed = new SpooledFeed();
    await feed.open();
    try {
      await feed.write(Buffer.from(lf));
      expect(byUid(await streamed(feed.finish(), feed))).toEqual(byUid(wholeParse(TEXT)));
      expect(byUid(await streamed(indexText(lf), textSource(lf)))).toEqual(byUid(wholeParse(TEXT)));
    } finally {
      await feed.close();
    }
  });

  it('refuses text that is not iCalendar, naming the fault, before anything is read', () => {
    const cases: [string, RegExp][] = [
      ['BEGIN:VCALENDAR\r\nthis is not a calendar\r\n', /could not be read \(line 2 is not a property/],
      ['BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\n', /could not be read \(VEVENT began but did not end\)/],
      ['BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nEND:VTODO\r\n', /ends a VTODO that was not begun/],
      ['BEGIN:VCARD\r\nFN:Someone\r\nEND:VCARD\r\n', /holds a VCARD where a VCALENDAR was expected/],
      ['', /could not be read \(no VCALENDAR\)/],
      ['SUMMARY:loose\r\n', /stands outside a VCALENDAR/],
    ];
    for (const [text, message] of cases) {
      expect(() => indexText(text), JSON.stringify(text)).toThrow(message);
    }
  });
});
