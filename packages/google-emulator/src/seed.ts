/**
 * Seed data: user accounts (each with a primary calendar), secondary calendars with shares and
 * events, OAuth clients and service accounts (with a generated key pair when none is given).
 * Events go through the same validation as events.insert.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isValidTimeZone } from '@calgate/core';
import { createCalendar } from './calendar/calendars-routes.ts';
import { insertEvent } from './events/write.ts';
import type { AccessRole, CalendarRecord, EmulatorState } from './state.ts';

/** A Google event resource as events.insert accepts it (`id` optional). */
export type SeedEvent = Record<string, unknown>;

export interface SeedShare {
  email: string;
  role: Exclude<AccessRole, 'none' | 'owner'> | 'owner';
  /**
   * Whether the calendar appears on the grantee's calendar list. Default true for people;
   * false for service accounts, which (as with Google) must calendarList.insert it themselves.
   */
  listed?: boolean;
}

export interface SeedCalendar {
  id?: string;
  summary: string;
  description?: string;
  location?: string;
  timeZone?: string;
  shares?: SeedShare[];
  events?: SeedEvent[];
}

export interface SeedAccount {
  email: string;
  name?: string;
  /** The primary calendar's zone; default UTC. */
  timeZone?: string;
  /** Events on the primary calendar. */
  events?: SeedEvent[];
  /** Shares of the primary calendar. */
  shares?: SeedShare[];
  /** Secondary calendars owned by this account. */
  calendars?: SeedCalendar[];
}

export interface SeedServiceAccount {
  email: string;
  clientId?: string;
  /** PEM public key (SPKI) or a private key; a key pair is generated when neither is given. */
  publicKeyPem?: string;
  privateKeyPem?: string;
  keyId?: string;
  domainWideDelegation?: boolean;
  calendars?: SeedCalendar[];
}

export interface SeedClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  name?: string;
}

export interface EmulatorSeed {
  accounts?: SeedAccount[];
  serviceAccounts?: SeedServiceAccount[];
  oauthClients?: SeedClient[];
}

const numericId = (email: string) =>
  BigInt(`0x${createHash('sha256').update(email).digest('hex').slice(0, 16)}`)
    .toString()
    .padStart(21, '1')
    .slice(0, 21);

function seedServiceAccount(state: EmulatorState, sa: SeedServiceAccount): void {
  let privateKeyPem = sa.privateKeyPem;
  if (!privateKeyPem && !sa.publicKeyPem) {
    privateKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
  }
  const publicKey = sa.publicKeyPem
    ? createPublicKey(sa.publicKeyPem)
    : createPublicKey(createPrivateKey(privateKeyPem as string));
  state.serviceAccounts.set(sa.email, {
    email: sa.email,
    clientId: sa.clientId ?? numericId(sa.email),
    keyId: sa.keyId ?? randomBytes(20).toString('hex'),
    publicKey,
    ...(privateKeyPem ? { privateKeyPem } : {}),
    domainWideDelegation: sa.domainWideDelegation ?? false,
  });
}

function primaryCalendar(state: EmulatorState, email: string, timeZone: string): CalendarRecord {
  return (
    state.calendars.get(email) ??
    createCalendar(state, email, { id: email, summary: email, timeZone, primary: true })
  );
}

function fillCalendar(
  state: EmulatorState,
  calendar: CalendarRecord,
  seed: SeedCalendar | SeedAccount,
): void {
  for (const share of seed.shares ?? []) {
    calendar.acl.set(share.email, share.role);
    const isService = state.serviceAccounts.has(share.email);
    if (share.listed ?? !isService) {
      state.addToList(share.email, calendar.id);
    }
  }
  const owner = state.serviceAccounts.has(calendar.dataOwner) ? 'service' : 'user';
  for (const event of seed.events ?? []) {
    insertEvent(state, calendar, { email: calendar.dataOwner, kind: owner }, event);
  }
}

function secondary(
  state: EmulatorState,
  owner: string,
  fallbackZone: string,
  seed: SeedCalendar,
): CalendarRecord {
  const zone = seed.timeZone ?? fallbackZone;
  const existing = seed.id ? state.calendars.get(seed.id) : undefined;
  const calendar =
    existing ??
    createCalendar(state, owner, {
      ...(seed.id ? { id: seed.id } : {}),
      summary: seed.summary,
      timeZone: zone,
    });
  if (seed.description !== undefined) {
    calendar.description = seed.description;
  }
  if (seed.location !== undefined) {
    calendar.location = seed.location;
  }
  return calendar;
}

/** Adds the seed to the state (existing accounts and calendars are extended, not replaced). */
export function applySeed(state: EmulatorState, seed: EmulatorSeed): void {
  for (const client of seed.oauthClients ?? []) {
    state.clients.set(client.clientId, {
      name: 'Calgate',
      ...client,
      redirectUris: [...client.redirectUris],
    });
  }
  for (const account of seed.accounts ?? []) {
    const zone = account.timeZone ?? 'UTC';
    if (!isValidTimeZone(zone)) {
      throw new Error(`Seed account ${account.email}: unknown time zone '${zone}'.`);
    }
    state.accounts.set(account.email, {
      email: account.email,
      name: account.name ?? account.email.split('@')[0] ?? account.email,
      timeZone: zone,
      id: numericId(account.email),
    });
    primaryCalendar(state, account.email, zone);
  }
  for (const sa of seed.serviceAccounts ?? []) {
    seedServiceAccount(state, sa);
    primaryCalendar(state, sa.email, 'UTC');
  }
  // Calendars and events last, so that shares may name any seeded principal.
  for (const account of seed.accounts ?? []) {
    const zone = account.timeZone ?? 'UTC';
    fillCalendar(state, primaryCalendar(state, account.email, zone), account);
    for (const cal of account.calendars ?? []) {
      fillCalendar(state, secondary(state, account.email, zone, cal), cal);
    }
  }
  for (const sa of seed.serviceAccounts ?? []) {
    for (const cal of sa.calendars ?? []) {
      fillCalendar(state, secondary(state, sa.email, 'UTC', cal), cal);
    }
  }
}
