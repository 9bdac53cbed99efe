-- Calendars beyond Google: Microsoft 365 / Outlook (Graph, OAuth), CalDAV servers (iCloud,
-- Fastmail, Nextcloud…: a username and password), and iCalendar feeds a workspace subscribes to
-- (read only). New values only: nothing existing changes.
ALTER TYPE "ConnectionProvider" ADD VALUE IF NOT EXISTS 'microsoft';
ALTER TYPE "ConnectionProvider" ADD VALUE IF NOT EXISTS 'caldav';
ALTER TYPE "ConnectionProvider" ADD VALUE IF NOT EXISTS 'ics';
