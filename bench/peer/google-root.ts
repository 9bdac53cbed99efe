/**
 * Preloaded (`node --import`) into the peer so its Google calls reach the project's emulator.
 * The peer builds its googleapis clients itself (`google.calendar({ version, auth })`) and has no
 * setting for Google's address. googleapis takes one per API client: `rootUrl` in the options of
 * `google.calendar(...)` rewrites the origin of every request of that client. So this wraps
 * `google.calendar` to add it. The peer bundles its own googleapis copy; this loads that copy
 * (resolved from the peer's entry point), the very instance the peer's `import "googleapis"`
 * gets. OAuth endpoints are not touched: the bench gives the peer an access token that outlives
 * the run and its account's e-mail address, so it never refreshes or asks whose token it is.
 */
import { createRequire } from 'node:module';

type CalendarFactory = (options: string | Record<string, unknown>) => unknown;

const rootUrl = process.env.PEER_GOOGLE_ROOT_URL;
const entry = process.env.PEER_ENTRY;
if (rootUrl === undefined || entry === undefined) {
  throw new Error('google-root.ts needs PEER_GOOGLE_ROOT_URL and PEER_ENTRY.');
}
const { google } = createRequire(entry)('googleapis') as { google: { calendar: CalendarFactory } };
const calendar = google.calendar.bind(google);
google.calendar = (options) =>
  calendar(typeof options === 'string' ? { version: options, rootUrl } : { ...options, rootUrl });
