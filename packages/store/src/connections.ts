import { CalgateError, newId } from '@calgate/core';
import type { Prisma } from './db.ts';
import type { SecretBox } from './secret-box.ts';

/** Where a connection's calendars live. */
export type ConnectionProviderKind = 'google' | 'local' | 'microsoft' | 'caldav' | 'ics';
/** How Calgate signs in to it. */
export type ConnectionAuthKind = 'oauth' | 'service_account' | 'none' | 'password';

export interface ConnectionRecord {
  id: string;
  tenantId: string;
  provider: ConnectionProviderKind;
  accountEmail: string;
  auth: ConnectionAuthKind;
  status: 'active' | 'needs_reauth' | 'disabled';
  statusDetail: string | null;
  /**
   * OAuth scopes Google granted (its token response's `scope`); empty when unknown (service
   * accounts, local calendars, or a token whose answer did not list them).
   */
  scopes: string[];
}

const SUMMARY = {
  id: true,
  tenantId: true,
  provider: true,
  accountEmail: true,
  auth: true,
  status: true,
  statusDetail: true,
  scopes: true,
} as const;

/** Upstream accounts and their credentials, which are only ever stored sealed. */
export class ConnectionRepository {
  readonly #prisma: Prisma;
  readonly #box: SecretBox;

  constructor(prisma: Prisma, box: SecretBox) {
    this.#prisma = prisma;
    this.#box = box;
  }

  create(
    tenantId: string,
    input: { provider: ConnectionProviderKind; accountEmail: string; auth: ConnectionAuthKind },
  ): Promise<ConnectionRecord> {
    return this.#prisma.connection.create({
      data: { id: newId('con'), tenantId, ...input },
      select: SUMMARY,
    });
  }

  /**
   * The tenant's connection for this account, created or brought back to `active`: reconnecting
   * the same account updates it instead of adding another.
   */
  upsert(
    tenantId: string,
    input: {
      provider: ConnectionProviderKind;
      accountEmail: string;
      auth: ConnectionAuthKind;
      /** Replaces the stored scopes when given (a new consent); left alone when absent. */
      scopes?: string[];
    },
  ): Promise<ConnectionRecord> {
    return this.#prisma.connection.upsert({
      where: {
        tenantId_provider_accountEmail: {
          tenantId,
          provider: input.provider,
          accountEmail: input.accountEmail,
        },
      },
      update: {
        auth: input.auth,
        status: 'active',
        statusDetail: null,
        ...(input.scopes === undefined ? {} : { scopes: input.scopes }),
      },
      create: { id: newId('con'), tenantId, ...input },
      select: SUMMARY,
    });
  }

  /**
   * Gives a connection another identity (its calendars, grants and credentials stay): an account
   * whose identity came to be written otherwise, e.g. a CalDAV username qualified by its server.
   */
  async rename(tenantId: string, connectionId: string, accountEmail: string): Promise<void> {
    await this.#prisma.connection.updateMany({
      where: { id: connectionId, tenantId },
      data: { accountEmail },
    });
  }

  get(tenantId: string, connectionId: string): Promise<ConnectionRecord | null> {
    return this.#prisma.connection.findFirst({ where: { id: connectionId, tenantId }, select: SUMMARY });
  }

  /** Deletes a connection with its calendars, their grants and their local events. */
  async delete(tenantId: string, connectionId: string): Promise<boolean> {
    const { count } = await this.#prisma.connection.deleteMany({ where: { id: connectionId, tenantId } });
    return count > 0;
  }

  list(tenantId: string): Promise<ConnectionRecord[]> {
    return this.#prisma.connection.findMany({
      where: { tenantId },
      orderBy: { createdAt: 'asc' },
      select: SUMMARY,
    });
  }

  /** Seals the credentials (e.g. an OAuth refresh token as JSON) to this tenant and connection. */
  async storeCredentials(tenantId: string, connectionId: string, plaintext: string): Promise<void> {
    const sealed = this.#box.seal(plaintext, { tenantId, connectionId });
    const { count } = await this.#prisma.connection.updateMany({
      where: { id: connectionId, tenantId },
      data: { credentials: Buffer.from(sealed.ciphertext), credentialsKeyId: sealed.keyId },
    });
    if (count === 0) {
      throw new CalgateError('not_found', `No connection ${connectionId} in this tenant.`);
    }
  }

  /** Opens the stored credentials, or null when the connection has none. */
  async readCredentials(tenantId: string, connectionId: string): Promise<string | null> {
    const row = await this.#prisma.connection.findFirst({
      where: { id: connectionId, tenantId },
      select: { credentials: true, credentialsKeyId: true },
    });
    if (row === null) {
      throw new CalgateError('not_found', `No connection ${connectionId} in this tenant.`);
    }
    if (row.credentials === null || row.credentialsKeyId === null) {
      return null;
    }
    return this.#box.open(
      { keyId: row.credentialsKeyId, ciphertext: row.credentials },
      { tenantId, connectionId },
    );
  }

  async setStatus(
    tenantId: string,
    connectionId: string,
    status: ConnectionRecord['status'],
    detail: string | null = null,
  ): Promise<void> {
    await this.#prisma.connection.updateMany({
      where: { id: connectionId, tenantId },
      data: { status, statusDetail: detail },
    });
  }

  /**
   * Re-seals every credential that is not sealed with the active key: the last step of a
   * master-key rotation. Rows no configured key can open are left untouched and reported.
   */
  async resealAll(): Promise<{ resealed: number; unreadable: string[] }> {
    const rows = await this.#prisma.connection.findMany({
      where: { credentialsKeyId: { not: null, notIn: [this.#box.activeKeyId] } },
      select: { id: true, tenantId: true },
    });
    let resealed = 0;
    const unreadable: string[] = [];
    for (const row of rows) {
      let plaintext: string | null;
      try {
        plaintext = await this.readCredentials(row.tenantId, row.id);
      } catch {
        unreadable.push(row.id);
        continue;
      }
      if (plaintext !== null) {
        await this.storeCredentials(row.tenantId, row.id, plaintext);
        resealed += 1;
      }
    }
    return { resealed, unreadable };
  }
}
