import { createHash, randomBytes } from 'node:crypto';
import { CalgateError, err, newId, ok, type Result, validateTimeZone } from '@calgate/core';
import type { Prisma } from './db.ts';
import { cleanText } from './sql.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_CHARS = 32;
export const API_KEY_PREFIX = 'cg_live_';
/** `cg_live_` and 32 base62 characters: about 190 bits of randomness. */
export const API_KEY_PATTERN = /^cg_live_[A-Za-z0-9]{32}$/;

/** A new key secret, uniformly random over base62 (bytes ≥ 248 are rejected, not folded). */
export function generateApiKeySecret(): string {
  let body = '';
  while (body.length < SECRET_CHARS) {
    for (const byte of randomBytes(SECRET_CHARS)) {
      if (byte < 248 && body.length < SECRET_CHARS) {
        body += ALPHABET[byte % 62];
      }
    }
  }
  return `${API_KEY_PREFIX}${body}`;
}

export function hashApiKey(secret: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update(secret, 'utf8').digest());
}

/** What is shown of a key after creation: enough to recognise it, never enough to use it. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, API_KEY_PREFIX.length + 4);
}

/**
 * The toolsets a key can switch on; a key's agent sees only the tools of its toolsets. The
 * database's CHECK on api_keys.toolsets holds the same names.
 */
export const TOOLSETS = ['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics'] as const;
export type Toolset = (typeof TOOLSETS)[number];
/** What a new key has, and what every key had before toolsets existed. */
export const DEFAULT_TOOLSETS: readonly Toolset[] = ['calendar', 'booking', 'search'];

function isToolset(name: string): name is Toolset {
  return (TOOLSETS as readonly string[]).includes(name);
}

/**
 * Checks a set of toolset names (surrounding space and empty entries ignored) and returns them
 * once each, in the order of TOOLSETS; unknown names or an empty set are refused with the valid names.
 */
export function validateToolsets(names: readonly string[]): Result<Toolset[], CalgateError> {
  const given = names.map((name) => name.trim()).filter((name) => name !== '');
  const unknown = [...new Set(given.filter((name) => !isToolset(name)))];
  const valid = `the toolsets are ${TOOLSETS.join(', ')}`;
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 5).map((name) => `'${name.slice(0, 40)}'`);
    const quoted =
      unknown.length > shown.length ? `${shown.join(', ')} and ${unknown.length - 5} more` : shown.join(', ');
    return err(
      new CalgateError(
        'invalid_argument',
        `Unknown toolset${unknown.length > 1 ? 's' : ''} ${quoted}: ${valid}.`,
        { context: { toolsets: unknown.slice(0, 5) } },
      ),
    );
  }
  if (given.length === 0) {
    return err(new CalgateError('invalid_argument', `Give at least one toolset: ${valid}.`));
  }
  return ok(TOOLSETS.filter((toolset) => given.includes(toolset)));
}

function checkedToolsets(names: readonly string[]): Toolset[] {
  const checked = validateToolsets(names);
  if (!checked.ok) {
    throw checked.error;
  }
  return checked.value;
}

export interface ApiKeySummary {
  id: string;
  tenantId: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** The longest a replaced secret keeps working after a rotation: 24 hours. */
export const MAX_ROTATION_GRACE_SECONDS = 86_400;

/** A calendar a new key gets at once; Write implies Read, neither is no grant. */
export interface NewKeyGrant {
  calendarId: string;
  read: boolean;
  write: boolean;
}

/** What a person set for a key: its default calendar, time zone and toolsets. */
export interface KeyDefaults {
  /** The calendar set as the key's default (what `primary` means); null: Calgate chooses. */
  defaultCalendarId: string | null;
  /** The key's own IANA time zone; null: its default calendar's. */
  timeZone: string | null;
  /** The toolsets whose tools the key's agent sees, in the order of TOOLSETS. */
  toolsets: string[];
  /** Where this key's scheduled prompts go when neither the call nor its _meta names an agent. */
  defaultAgentId: string | null;
  /** What risky actions need after the key's agent was shown suspicious content: strict, ask or off. */
  hijackPolicy: string;
}

/** A key as listed: its summary and its defaults. */
export type ApiKeyDetails = ApiKeySummary & KeyDefaults;

/** A change of a key's defaults: a value sets it, null clears it, absent leaves it. */
export interface KeyDefaultsChange {
  defaultCalendarId?: string | null | undefined;
  timeZone?: string | null | undefined;
  /** Replaces the key's toolsets (at least one). */
  toolsets?: readonly string[] | undefined;
  /** The agent (e.g. a Letta agent id) this key's scheduled prompts go to by default; null clears it. */
  defaultAgentId?: string | null | undefined;
  /** strict, ask or off (see HIJACK_POLICIES). */
  hijackPolicy?: string | undefined;
}

/** What a key's risky actions need after its agent was shown suspicious content; the database's CHECK holds the same names. */
export const HIJACK_POLICIES = ['strict', 'ask', 'off'] as const;
export type HijackPolicy = (typeof HIJACK_POLICIES)[number];

const SUMMARY = {
  id: true,
  tenantId: true,
  name: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
} as const;

const DETAILS = {
  ...SUMMARY,
  defaultCalendarId: true,
  timeZone: true,
  toolsets: true,
  defaultAgentId: true,
  hijackPolicy: true,
} as const;

export class ApiKeyRepository {
  readonly #prisma: Prisma;

  constructor(prisma: Prisma) {
    this.#prisma = prisma;
  }

  /**
   * Creates a key and returns its secret, which is stored only as a SHA-256 hash. Without
   * toolsets it gets DEFAULT_TOOLSETS; with grants it gets them in the same transaction. Unknown
   * toolsets, another tenant's calendar, a calendar named twice or Write where the account may
   * not write are refused, and then nothing is created.
   */
  async create(
    tenantId: string,
    input: {
      name: string;
      expiresAt?: Date | null;
      toolsets?: readonly string[] | undefined;
      grants?: readonly NewKeyGrant[] | undefined;
      /** The key's own IANA zone; absent or null: the workspace's (else its default calendar's). */
      timeZone?: string | null | undefined;
    },
  ): Promise<{ key: ApiKeyDetails; secret: string }> {
    const toolsets = checkedToolsets(input.toolsets ?? DEFAULT_TOOLSETS);
    let timeZone: string | null = null;
    if (typeof input.timeZone === 'string') {
      const checked = validateTimeZone(input.timeZone.trim());
      if (!checked.ok) {
        throw checked.error;
      }
      timeZone = checked.value;
    }
    const grants = (input.grants ?? []).filter((grant) => grant.read || grant.write);
    const named = grants.map((grant) => grant.calendarId);
    const twice = named.find((id, index) => named.indexOf(id) !== index);
    if (twice !== undefined) {
      throw new CalgateError('invalid_argument', `Calendar ${twice} is named twice in grants; name it once.`);
    }
    const secret = generateApiKeySecret();
    return this.#prisma.$transaction(async (tx) => {
      const calendars = await tx.calendar.findMany({
        where: { tenantId, id: { in: named } },
        select: { id: true, summary: true, accessRole: true },
      });
      for (const grant of grants) {
        const calendar = calendars.find((item) => item.id === grant.calendarId);
        if (calendar === undefined) {
          throw new CalgateError(
            'not_found',
            `No calendar ${grant.calendarId} in this tenant; no key was created.`,
          );
        }
        if (grant.write && calendar.accessRole !== 'owner' && calendar.accessRole !== 'writer') {
          throw new CalgateError(
            'precondition_failed',
            `Calendar ${calendar.id} ('${calendar.summary}') is shared with the account as ${calendar.accessRole}; Calgate cannot write to it, so the key cannot get Write on it. No key was created.`,
          );
        }
      }
      const key = await tx.apiKey.create({
        data: {
          id: newId('key'),
          tenantId,
          name: input.name,
          prefix: displayPrefix(secret),
          hash: hashApiKey(secret),
          expiresAt: input.expiresAt ?? null,
          toolsets,
          timeZone,
        },
        select: DETAILS,
      });
      if (grants.length > 0) {
        await tx.grant.createMany({
          data: grants.map((grant) => ({
            tenantId,
            keyId: key.id,
            calendarId: grant.calendarId,
            canRead: true,
            canWrite: grant.write,
          })),
        });
      }
      return { key, secret };
    });
  }

  /**
   * Gives a live key a new secret; the key keeps its id, grants, defaults and schedules. The
   * replaced secret keeps working for `graceSeconds` (0: it stops at once), so agents can be
   * moved over without a gap; a second rotation ends the first one's grace. Null when the key is
   * not this tenant's or is an OAuth connection (it has no secret); a conflict when revoked.
   */
  async rotate(
    tenantId: string,
    keyId: string,
    options: { graceSeconds?: number; at?: Date } = {},
  ): Promise<{ key: ApiKeyDetails; secret: string; previousValidUntil: Date | null } | null> {
    const graceSeconds = options.graceSeconds ?? 0;
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_ROTATION_GRACE_SECONDS) {
      throw new CalgateError(
        'invalid_argument',
        `The grace period is whole seconds from 0 to ${MAX_ROTATION_GRACE_SECONDS} (24 h), not ${graceSeconds}.`,
      );
    }
    const at = options.at ?? new Date();
    const old = await this.#prisma.apiKey.findFirst({
      where: { id: keyId, tenantId, kind: 'key' },
      select: { hash: true, revokedAt: true },
    });
    if (old === null) {
      return null;
    }
    if (old.revokedAt !== null) {
      throw new CalgateError('conflict', `API key ${keyId} is already revoked; create a new key instead.`);
    }
    const secret = generateApiKeySecret();
    const previousValidUntil = graceSeconds === 0 ? null : new Date(at.getTime() + graceSeconds * 1000);
    // Only if nothing rotated or revoked it since it was read: two rotations at once must not
    // leave a secret nobody was shown.
    const { count } = await this.#prisma.apiKey.updateMany({
      where: { id: keyId, tenantId, hash: old.hash, revokedAt: null },
      data: {
        hash: hashApiKey(secret),
        prefix: displayPrefix(secret),
        previousHash: previousValidUntil === null ? null : old.hash,
        previousValidUntil,
      },
    });
    if (count === 0) {
      throw new CalgateError(
        'conflict',
        `API key ${keyId} was rotated or revoked meanwhile; reload and try again.`,
      );
    }
    const key = await this.get(tenantId, keyId);
    if (key === null) {
      return null;
    }
    return { key, secret, previousValidUntil };
  }

  /** The tenant's API keys; OAuth connections (kind 'oauth') are listed by OAuthRepository. */
  list(tenantId: string): Promise<ApiKeyDetails[]> {
    return this.#prisma.apiKey.findMany({
      where: { tenantId, kind: 'key' },
      orderBy: { createdAt: 'asc' },
      select: DETAILS,
    });
  }

  get(tenantId: string, keyId: string): Promise<ApiKeyDetails | null> {
    return this.#prisma.apiKey.findFirst({ where: { id: keyId, tenantId }, select: DETAILS });
  }

  /** Revokes a key of this tenant; false when no such key exists (or it belongs to another tenant). */
  async revoke(tenantId: string, keyId: string, at = new Date()): Promise<boolean> {
    const { count } = await this.#prisma.apiKey.updateMany({
      where: { id: keyId, tenantId, revokedAt: null },
      data: { revokedAt: at },
    });
    if (count > 0) {
      return true;
    }
    return (await this.get(tenantId, keyId)) !== null;
  }

  /**
   * Sets or clears a key's default calendar and time zone, and sets its toolsets. The calendar
   * must be one of this tenant's that the key may read; the zone an IANA name; the toolsets known.
   * Anything invalid is refused before anything changes.
   */
  async setDefaults(tenantId: string, keyId: string, change: KeyDefaultsChange): Promise<ApiKeyDetails> {
    const { defaultCalendarId, timeZone } = change;
    if (
      defaultCalendarId === undefined &&
      timeZone === undefined &&
      change.toolsets === undefined &&
      change.defaultAgentId === undefined &&
      change.hijackPolicy === undefined
    ) {
      throw new CalgateError(
        'invalid_argument',
        'Nothing to change: give a default calendar, a time zone, toolsets, a default agent and/or a hijack policy.',
      );
    }
    const { hijackPolicy } = change;
    if (hijackPolicy !== undefined && !(HIJACK_POLICIES as readonly string[]).includes(hijackPolicy)) {
      throw new CalgateError(
        'invalid_argument',
        `Unknown hijack policy '${hijackPolicy}'; use one of ${HIJACK_POLICIES.join(', ')}.`,
      );
    }
    const defaultAgentId =
      typeof change.defaultAgentId === 'string'
        ? cleanText(change.defaultAgentId, 'Default agent id', 200)
        : change.defaultAgentId;
    const toolsets = change.toolsets === undefined ? undefined : checkedToolsets(change.toolsets);
    let zone: string | null | undefined = timeZone;
    if (typeof timeZone === 'string') {
      const checked = validateTimeZone(timeZone.trim());
      if (!checked.ok) {
        throw checked.error;
      }
      zone = checked.value;
    }
    return this.#prisma.$transaction(async (tx) => {
      const key = await tx.apiKey.findFirst({ where: { id: keyId, tenantId }, select: { revokedAt: true } });
      if (key === null) {
        throw new CalgateError('not_found', `No API key ${keyId} in this tenant.`);
      }
      if (key.revokedAt !== null) {
        throw new CalgateError('conflict', `API key ${keyId} is revoked; its settings can no longer change.`);
      }
      if (typeof defaultCalendarId === 'string') {
        const calendar = await tx.calendar.findFirst({
          where: { id: defaultCalendarId, tenantId },
          select: { summary: true, grants: { where: { keyId, canRead: true }, select: { keyId: true } } },
        });
        if (calendar === null) {
          throw new CalgateError('not_found', `No calendar ${defaultCalendarId} in this tenant.`);
        }
        if (calendar.grants.length === 0) {
          throw new CalgateError(
            'invalid_argument',
            `API key ${keyId} cannot read calendar ${defaultCalendarId} ('${calendar.summary}'), so it cannot be its default. Give the key Read on it first (dashboard Permissions, or calgate grant --key ${keyId} --calendar ${defaultCalendarId} --read).`,
          );
        }
      }
      return tx.apiKey.update({
        where: { id: keyId },
        data: {
          ...(defaultCalendarId === undefined ? {} : { defaultCalendarId }),
          ...(zone === undefined ? {} : { timeZone: zone }),
          ...(toolsets === undefined ? {} : { toolsets }),
          ...(defaultAgentId === undefined ? {} : { defaultAgentId }),
          ...(hijackPolicy === undefined ? {} : { hijackPolicy }),
        },
        select: DETAILS,
      });
    });
  }

  /**
   * Makes `calendarId` (a newly connected Google account's primary) the default of every key of
   * the tenant that can read it and has no default yet or still has the first-run calendar. The
   * first-run calendar is the primary calendar of the tenant's local account: the one Calgate
   * creates on first start, before any account is connected. A default a person set to any other
   * calendar is kept. Returns the ids of the keys changed.
   */
  async adoptDefaultCalendar(tenantId: string, calendarId: string): Promise<string[]> {
    const rows = await this.#prisma.$queryRaw<{ id: string }[]>`
      UPDATE api_keys k SET default_calendar_id = ${calendarId}
      WHERE k.tenant_id = ${tenantId}
        AND EXISTS (SELECT 1 FROM grants g
                    WHERE g.key_id = k.id AND g.calendar_id = ${calendarId} AND g.can_read)
        AND (k.default_calendar_id IS NULL OR EXISTS (
          SELECT 1 FROM calendars c
          JOIN connections n ON n.id = c.connection_id AND n.tenant_id = c.tenant_id
          WHERE c.id = k.default_calendar_id AND c.tenant_id = k.tenant_id
            AND n.provider = 'local' AND c.is_primary))
      RETURNING k.id`;
    return rows.map((row) => row.id);
  }

  /** Records use; called in batches so the hot path does not write per request. */
  async touch(keyIds: readonly string[], at = new Date()): Promise<void> {
    if (keyIds.length === 0) {
      return;
    }
    await this.#prisma.apiKey.updateMany({ where: { id: { in: [...keyIds] } }, data: { lastUsedAt: at } });
  }
}
