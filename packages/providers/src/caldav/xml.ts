/**
 * WebDAV multistatus answers read with fast-xml-parser (namespace prefixes dropped: the element
 * names CalDAV uses do not collide across DAV:, CalDAV, Apple's and CalendarServer's namespaces),
 * and the few request bodies CalDAV needs, with every value escaped.
 */
import { XMLParser } from 'fast-xml-parser';

const ARRAYS = new Set(['response', 'propstat', 'href', 'privilege', 'comp']);

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  isArray: (name) => ARRAYS.has(name),
});

export type XmlNode = Record<string, unknown>;

export interface DavPropstat {
  status: number;
  props: XmlNode;
}

export interface DavResponse {
  /** The href as the server wrote it. */
  href: string;
  /** A response-level status (sync-collection's removed members: 404). */
  status: number | undefined;
  propstats: DavPropstat[];
}

export interface Multistatus {
  responses: DavResponse[];
  syncToken: string | undefined;
}

function statusCode(line: unknown): number | undefined {
  const m = /^HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(textOf(line)?.trim() ?? '');
  return m === null ? undefined : Number(m[1]);
}

/** The text content of a parsed element ('' for an empty one). */
export function textOf(node: unknown): string | undefined {
  if (typeof node === 'string') {
    return node;
  }
  if (Array.isArray(node)) {
    return textOf(node[0]);
  }
  if (node !== null && typeof node === 'object') {
    const inner = (node as XmlNode)['#text'];
    return typeof inner === 'string' ? inner : '';
  }
  return undefined;
}

/** The child elements' local names of a parsed element (resourcetype, privilege). */
export function childNames(node: unknown): string[] {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) {
    return [];
  }
  return Object.keys(node).filter((key) => !key.startsWith('@') && key !== '#text');
}

/** The first href inside a property (current-user-principal, calendar-home-set). */
export function hrefsOf(node: unknown): string[] {
  if (node === null || typeof node !== 'object') {
    return [];
  }
  const hrefs = (node as XmlNode).href;
  return Array.isArray(hrefs) ? hrefs.map((h) => textOf(h)?.trim() ?? '').filter((h) => h !== '') : [];
}

export function parseMultistatus(xml: string): Multistatus {
  const document = parser.parse(xml) as XmlNode;
  const root = (document.multistatus ?? {}) as XmlNode;
  const responses: DavResponse[] = [];
  for (const response of (root.response as XmlNode[] | undefined) ?? []) {
    const href = hrefsOf(response)[0];
    if (href === undefined) {
      continue;
    }
    const propstats: DavPropstat[] = [];
    for (const propstat of (response.propstat as XmlNode[] | undefined) ?? []) {
      const props = propstat.prop;
      propstats.push({
        status: statusCode(propstat.status) ?? 200,
        props: props !== null && typeof props === 'object' ? (props as XmlNode) : {},
      });
    }
    responses.push({ href, status: statusCode(response.status), propstats });
  }
  const token = textOf(root['sync-token'])?.trim();
  return { responses, syncToken: token === undefined || token === '' ? undefined : token };
}

/** The properties a response reported with status 200, merged. */
export function foundProps(response: DavResponse): XmlNode {
  const out: XmlNode = {};
  for (const propstat of response.propstats) {
    if (propstat.status >= 200 && propstat.status < 300) {
      Object.assign(out, propstat.props);
    }
  }
  return out;
}

/** The local names of a WebDAV error body's preconditions (`valid-sync-token`). */
export function errorConditions(xml: string): string[] {
  try {
    const document = parser.parse(xml) as XmlNode;
    return childNames(document.error);
  } catch {
    return [];
  }
}

export function escapeXml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const NAMESPACES =
  'xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/" xmlns:ical="http://apple.com/ns/ical/"';

export function propfindBody(props: readonly string[]): string {
  return `<?xml version="1.0" encoding="utf-8"?><d:propfind ${NAMESPACES}><d:prop>${props.map((p) => `<${p}/>`).join('')}</d:prop></d:propfind>`;
}

/** `YYYYMMDDTHHMMSSZ` of an instant. */
export function icsUtc(instant: number): string {
  return new Date(instant)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

export function calendarQueryBody(
  from: number | undefined,
  to: number | undefined,
  withData: boolean,
): string {
  const range =
    from === undefined && to === undefined
      ? ''
      : `<c:time-range${from === undefined ? '' : ` start="${icsUtc(from)}"`}${to === undefined ? '' : ` end="${icsUtc(to)}"`}/>`;
  return `<?xml version="1.0" encoding="utf-8"?><c:calendar-query ${NAMESPACES}><d:prop><d:getetag/>${withData ? '<c:calendar-data/>' : ''}</d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT">${range}</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`;
}

export function multigetBody(hrefs: readonly string[]): string {
  return `<?xml version="1.0" encoding="utf-8"?><c:calendar-multiget ${NAMESPACES}><d:prop><d:getetag/><c:calendar-data/></d:prop>${hrefs.map((h) => `<d:href>${escapeXml(h)}</d:href>`).join('')}</c:calendar-multiget>`;
}

export function syncCollectionBody(token: string | undefined): string {
  return `<?xml version="1.0" encoding="utf-8"?><d:sync-collection ${NAMESPACES}><d:sync-token>${token === undefined ? '' : escapeXml(token)}</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`;
}

/** calendar-query for VEVENTs that have property `name` (RFC 4791 prop-filter without a test). */
export function propertyQueryBody(name: string): string {
  return `<?xml version="1.0" encoding="utf-8"?><c:calendar-query ${NAMESPACES}><d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:prop-filter name="${escapeXml(name)}"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`;
}

/**
 * calendar-query for every VEVENT object, asking only for its UID (RFC 4791 §9.6 partial
 * retrieval); `partial` false asks for the whole calendar-data, for servers that refuse it.
 */
export function uidQueryBody(partial: boolean): string {
  const data = partial
    ? '<c:calendar-data><c:comp name="VCALENDAR"><c:comp name="VEVENT"><c:prop name="UID"/><c:prop name="RECURRENCE-ID"/></c:comp></c:comp></c:calendar-data>'
    : '<c:calendar-data/>';
  return `<?xml version="1.0" encoding="utf-8"?><c:calendar-query ${NAMESPACES}><d:prop><d:getetag/>${data}</d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"/></c:comp-filter></c:filter></c:calendar-query>`;
}
