import { CalgateError } from '@calgate/core';
import type { RateLimiter } from '@calgate/locks';
import type {
  ApiKeyRepository,
  ConnectionRepository,
  Database,
  OAuthRepository,
  RulesRepository,
  TenancyRepository,
  UserRepository,
} from '@calgate/store';
import type { ProviderResolver } from '@calgate/tools';
import type { z } from 'zod';
import type { TwoStepSignIn } from '../../auth/two-step.ts';
import type { Mailer } from '../../mail.ts';
import type { DashboardGuard } from './guard.ts';

/** What the runtime supplies for accounts, keys, the matrix and the audit log. */
export interface DashboardAccountDeps {
  /** Derived from the secret box ('csrf'); signs CSRF tokens bound to a session. */
  csrfKey: Uint8Array;
  db: Database;
  users: UserRepository;
  keys: ApiKeyRepository;
  /** OAuth clients and the connections people approved for them (connected apps). */
  oauth: OAuthRepository;
  /** Sign-in attempts per email and client address. */
  signInLimiter: RateLimiter;
  /** Projects, rules and classifications for the Projects & rules page. */
  rulesRepository: RulesRepository;
  /** Reaches the tenant's calendars for rule previews, filing and timesheets. */
  providers: ProviderResolver;
  /** Two-step sign-in (TOTP): set-up, codes and the challenge between password and code. */
  twoStep: TwoStepSignIn;
  /** Sends invitation and reset links when SMTP_URL is set; otherwise the dashboard shows them. */
  mailer?: Mailer;
}

/** What the dashboard REST routes under /api/v1 need. */
export interface ApiDeps {
  guard: DashboardGuard;
  db: Database;
  users: UserRepository;
  keys: ApiKeyRepository;
  tenancy: TenancyRepository;
  connections: ConnectionRepository;
  oauth: OAuthRepository;
  signInLimiter: RateLimiter;
  rulesRepository: RulesRepository;
  providers: ProviderResolver;
  /** Forgets cached key lookups (of the tenant, when given) so the next MCP call sees a change. */
  invalidateKeys(tenantId?: string): void;
  publicUrl: string;
  /** Two-step sign-in (TOTP): set-up, codes and the challenge between password and code. */
  twoStep: TwoStepSignIn;
  /** Sends invitation links when SMTP_URL is set. */
  mailer?: Mailer;
}

/** Parses a body, query or params with zod; a 400 that names every wrong field. */
export function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value ?? {});
  if (!result.success) {
    throw new CalgateError(
      'invalid_argument',
      result.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; '),
    );
  }
  return result.data;
}
