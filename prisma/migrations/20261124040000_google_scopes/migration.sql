-- The OAuth scopes Google granted to each connection (the token response's `scope`), so a
-- connection chosen as read-only is known to be one and can be upgraded to write later.
-- Accounts connected before this column existed were always asked for full calendar access.
ALTER TABLE "connections" ADD COLUMN "scopes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

UPDATE "connections"
SET "scopes" = ARRAY[
  'https://www.googleapis.com/auth/calendar',
  'https://www.googleapis.com/auth/calendar.events',
  'openid',
  'https://www.googleapis.com/auth/userinfo.email'
]
WHERE "provider" = 'google' AND "auth" = 'oauth';
