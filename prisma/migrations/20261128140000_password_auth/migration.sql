-- CalDAV accounts sign in with a username and password (sealed in `credentials` like OAuth
-- tokens). A new value only: nothing existing changes.
ALTER TYPE "ConnectionAuth" ADD VALUE IF NOT EXISTS 'password';
