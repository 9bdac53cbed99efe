/**
 * Reading a large iCalendar text without holding its parsed tree: a first pass over its lines
 * (the text in memory, or the bytes of a feed as they arrive) checks its structure and indexes
 * each UID's VEVENTs by range; each UID's components are then read and parsed on their own,
 * a few hundred UIDs at a time (readResources). A master and its RECURRENCE-ID overrides may
 * stand anywhere in the text: the index gathers them, at a few dozen bytes per UID.
 */
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CalgateError } from '@calgate/core';
import ICAL from 'ical.js';
import { instanceKey } from './expand.ts';
import { type IcsResource, instantOf, readTimeValue } from './read.ts';
import { ZoneTable } from './zones.ts';

/** Where one UID's VEVENTs are: its first UID line, and [start, end) pairs of offsets. */
export interface IcsUidEntry {
  line: number;
  ranges: number[];
}

/** A text's VEVENTs and VTIMEZONEs by range; offsets are the source's (characters or bytes). */
export interface IcsIndex {
  /** UIDs in the order they first appear. */
  uids: Map<string, IcsUidEntry>;
  /** Lines of the VEVENTs that have no UID. */
  missingUid: number[];
  /** [start, end) pairs of the VTIMEZONEs under the VCALENDAR. */
  zoneRanges: number[];
}

/** Reads ranges of the indexed source back as text. */
export interface IcsSource {
  read(ranges: readonly number[]): Promise<string[]>;
}

const PROPERTY = /^([A-Za-z0-9-]+)[;:]/;
/** Names whose folded continuation lines the index reads; other properties' are skipped. */
const KEPT = new Set(['BEGIN', 'END', 'UID']);

function unreadable(detail: string): CalgateError {
  return new CalgateError(
    'invalid_argument',
    `The iCalendar text could not be read (${detail}); expected a VCALENDAR as RFC 5545 writes it.`,
  );
}

function lineValue(line: string): string {
  return line.slice(line.indexOf(':') + 1);
}

/** A TEXT value as ical.js reads it (`\,` `\;` `\\` `\n` unescaped). */
function unescapeText(value: string): string {
  return value.replace(/\\([\\;,nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
}

/**
 * The first pass: fed raw lines in order (each without its line break, with the offsets of the
 * line and its break), it unfolds them, checks that components open and close in order under a
 * VCALENDAR, and indexes VEVENTs by UID. Errors are `invalid_argument`, thrown before anything
 * is written.
 */
export class IcsIndexer {
  readonly index: IcsIndex = { uids: new Map(), missingUid: [], zoneRanges: [] };
  readonly #stack: string[] = [];
  #pending: string | undefined;
  #pendingName = '';
  #pendingStart = 0;
  #pendingEnd = 0;
  #pendingLine = 0;
  #lines = 0;
  #componentStart = 0;
  #componentLine = 0;
  #uid: string | undefined;
  #uidLine = 0;
  #calendars = 0;

  push(raw: string, start: number, end: number): void {
    this.#lines += 1;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const first = line.charCodeAt(0);
    if ((first === 32 || first === 9) && this.#pending !== undefined) {
      if (KEPT.has(this.#pendingName)) {
        this.#pending += line.slice(1);
      }
      this.#pendingEnd = end;
      return;
    }
    this.#flush();
    if (line.trim() === '') {
      return;
    }
    const name = PROPERTY.exec(line)?.[1];
    if (name === undefined) {
      throw unreadable(`line ${this.#lines} is not a property: "${line.slice(0, 60)}"`);
    }
    this.#pending = line;
    this.#pendingName = name.toUpperCase();
    this.#pendingStart = start;
    this.#pendingEnd = end;
    this.#pendingLine = this.#lines;
  }

  /** Ends the pass; the index is complete. */
  finish(): IcsIndex {
    this.#flush();
    const open = this.#stack.at(-1);
    if (open !== undefined && open !== 'VCALENDAR') {
      throw unreadable(`${open} began but did not end`);
    }
    if (this.#calendars === 0) {
      throw unreadable('no VCALENDAR');
    }
    return this.index;
  }

  #flush(): void {
    const line = this.#pending;
    if (line === undefined) {
      return;
    }
    this.#pending = undefined;
    const name = this.#pendingName;
    const depth = this.#stack.length;
    if (name === 'BEGIN') {
      const component = lineValue(line).trim().toUpperCase();
      if (depth === 0) {
        if (component !== 'VCALENDAR') {
          throw new CalgateError(
            'invalid_argument',
            `The iCalendar text holds a ${component} where a VCALENDAR was expected.`,
          );
        }
        this.#calendars += 1;
      }
      if (depth === 1 && (component === 'VEVENT' || component === 'VTIMEZONE')) {
        this.#componentStart = this.#pendingStart;
        this.#componentLine = this.#pendingLine;
        this.#uid = undefined;
      }
      this.#stack.push(component);
      return;
    }
    if (name === 'END') {
      const component = lineValue(line).trim().toUpperCase();
      if (this.#stack.at(-1) !== component) {
        throw unreadable(`line ${this.#pendingLine} ends a ${component} that was not begun`);
      }
      this.#stack.pop();
      if (depth === 2 && component === 'VEVENT') {
        this.#indexEvent(this.#pendingEnd);
      } else if (depth === 2 && component === 'VTIMEZONE') {
        this.index.zoneRanges.push(this.#componentStart, this.#pendingEnd);
      }
      return;
    }
    if (depth === 0) {
      throw unreadable(`line ${this.#pendingLine} stands outside a VCALENDAR`);
    }
    if (name === 'UID' && depth === 2 && this.#stack[1] === 'VEVENT' && this.#uid === undefined) {
      this.#uid = unescapeText(lineValue(line));
      this.#uidLine = this.#pendingLine;
    }
  }

  #indexEvent(end: number): void {
    const uid = this.#uid;
    if (uid === undefined || uid === '') {
      this.index.missingUid.push(this.#componentLine);
      return;
    }
    const entry = this.index.uids.get(uid);
    if (entry === undefined) {
      this.index.uids.set(uid, { line: this.#uidLine, ranges: [this.#componentStart, end] });
    } else {
      entry.ranges.push(this.#componentStart, end);
    }
  }
}

/** Indexes text held in memory; its ranges are character offsets (see textSource). */
export function indexText(text: string): IcsIndex {
  const indexer = new IcsIndexer();
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (at < text.length) {
    const newline = text.indexOf('\n', at);
    const end = newline === -1 ? text.length : newline + 1;
    indexer.push(text.slice(at, newline === -1 ? text.length : newline), at, end);
    at = end;
  }
  return indexer.finish();
}

export function textSource(text: string): IcsSource {
  return {
    read: async (ranges) => {
      const out: string[] = [];
      for (let i = 0; i + 1 < ranges.length; i += 2) {
        out.push(text.slice(ranges[i], ranges[i + 1]));
      }
      return out;
    },
  };
}

/**
 * Splits bytes arriving in chunks into lines for an IcsIndexer, with byte offsets. Only a line
 * cut by a chunk's end is kept between chunks.
 */
export class ByteLines {
  readonly #indexer: IcsIndexer;
  #rest: Buffer | undefined;
  #offset = 0;
  #first = true;

  constructor(indexer: IcsIndexer) {
    this.#indexer = indexer;
  }

  push(chunk: Uint8Array): void {
    let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.#rest !== undefined) {
      bytes = Buffer.concat([this.#rest, bytes]);
      this.#rest = undefined;
    }
    let at = 0;
    if (this.#first && bytes.length >= 3) {
      this.#first = false;
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
        at = 3;
      }
    }
    for (;;) {
      const newline = bytes.indexOf(10, at);
      if (newline === -1) {
        break;
      }
      this.#indexer.push(bytes.toString('utf8', at, newline), this.#offset + at, this.#offset + newline + 1);
      at = newline + 1;
    }
    if (at < bytes.length) {
      this.#rest = Buffer.from(bytes.subarray(at));
    }
    this.#offset += at;
  }

  end(): void {
    if (this.#rest !== undefined) {
      const rest = this.#rest;
      this.#rest = undefined;
      this.#indexer.push(rest.toString('utf8'), this.#offset, this.#offset + rest.length);
      this.#offset += rest.length;
    }
  }
}

/** The VTIMEZONEs of an indexed text, as the zone table its VEVENTs' times are read with. */
export async function indexZones(
  index: IcsIndex,
  source: IcsSource,
  calendarZone: string,
): Promise<{ root: ICAL.Component; zones: ZoneTable }> {
  const root = new ICAL.Component('vcalendar');
  for (const text of await source.read(index.zoneRanges)) {
    root.addSubcomponent(new ICAL.Component(parseComponent(text)));
  }
  return { root, zones: new ZoneTable(root, calendarZone) };
}

function parseComponent(text: string): unknown[] {
  try {
    return ICAL.parse(text) as unknown[];
  } catch (cause) {
    throw unreadable(cause instanceof Error ? cause.message : 'malformed');
  }
}

/**
 * One UID's VEVENTs read and parsed as resources, as parseCalendarText groups them: the first
 * VEVENT without RECURRENCE-ID is the master, the others overrides; a second master with the
 * same UID is a separate event (feeds sometimes repeat UIDs). A VEVENT that cannot be parsed is
 * `invalid_argument`.
 */
export async function readUidResources(
  uid: string,
  entry: IcsUidEntry,
  source: IcsSource,
  zoneRoot: ICAL.Component,
  zones: ZoneTable,
): Promise<IcsResource[]> {
  const resources: IcsResource[] = [{ uid, master: undefined, overrides: [], zones }];
  const main = resources[0] as IcsResource;
  for (const text of await source.read(entry.ranges)) {
    const vevent = new ICAL.Component(parseComponent(text));
    vevent.parent = zoneRoot;
    if (vevent.hasProperty('recurrence-id')) {
      main.overrides.push(vevent);
    } else if (main.master === undefined) {
      main.master = vevent;
    } else {
      resources.push({ uid, master: vevent, overrides: [], zones });
    }
  }
  return resources;
}

/**
 * A feed's bytes written to a temporary file as they arrive and indexed on the way (nothing of
 * the feed stays in memory but the index); its ranges are read back from the file. close()
 * removes the file.
 */
export class SpooledFeed implements IcsSource {
  readonly #indexer = new IcsIndexer();
  readonly #lines = new ByteLines(this.#indexer);
  #dir: string | undefined;
  #file: FileHandle | undefined;
  #written = 0;

  async open(): Promise<void> {
    this.#dir = await mkdtemp(join(tmpdir(), 'calgate-ics-'));
    this.#file = await open(join(this.#dir, 'feed.ics'), 'w+');
  }

  /** Takes the next chunk of the body (written, then indexed). */
  async write(chunk: Uint8Array): Promise<void> {
    const file = this.#file;
    if (file === undefined) {
      throw new Error('SpooledFeed.write before open');
    }
    await file.write(chunk, 0, chunk.byteLength, this.#written);
    this.#written += chunk.byteLength;
    this.#lines.push(chunk);
  }

  finish(): IcsIndex {
    this.#lines.end();
    return this.#indexer.finish();
  }

  async read(ranges: readonly number[]): Promise<string[]> {
    const file = this.#file;
    if (file === undefined) {
      throw new Error('SpooledFeed.read before open');
    }
    const out: string[] = [];
    for (let i = 0; i + 1 < ranges.length; i += 2) {
      const start = ranges[i] as number;
      const buffer = Buffer.allocUnsafe((ranges[i + 1] as number) - start);
      const { bytesRead } = await file.read(buffer, 0, buffer.length, start);
      out.push(buffer.toString('utf8', 0, bytesRead));
    }
    return out;
  }

  async close(): Promise<void> {
    await this.#file?.close().catch(() => {});
    this.#file = undefined;
    if (this.#dir !== undefined) {
      await rm(this.#dir, { recursive: true, force: true });
      this.#dir = undefined;
    }
  }
}

/**
 * The instance keys (`20260107T080000Z`, `20260107` for dates) of a master's EXDATEs: for a
 * calendar that stores a series' RRULE alone (Outlook), they become deleted occurrences.
 */
export function exdateKeys(resource: IcsResource): string[] {
  const keys: string[] = [];
  for (const property of resource.master?.getAllProperties('exdate') ?? []) {
    const tzid = property.getParameter('tzid');
    for (const value of property.getValues()) {
      if (value instanceof ICAL.Time) {
        const time = readTimeValue(value, typeof tzid === 'string' ? tzid : undefined, resource.zones);
        keys.push(instanceKey(time, time.allDay ? time.naive : instantOf(time)));
      }
    }
  }
  return keys;
}
