/**
 * @calgate/store — the only package that talks to Postgres: the Prisma client, repositories,
 * the migration runner and the sealing of stored secrets.
 */

export {
  API_KEY_PATTERN,
  API_KEY_PREFIX,
  type ApiKeyDetails,
  ApiKeyRepository,
  type ApiKeySummary,
  DEFAULT_TOOLSETS,
  displayPrefix,
  generateApiKeySecret,
  HIJACK_POLICIES,
  type HijackPolicy,
  hashApiKey,
  type KeyDefaults,
  type KeyDefaultsChange,
  MAX_ROTATION_GRACE_SECONDS,
  type NewKeyGrant,
  TOOLSETS,
  type Toolset,
  validateToolsets,
} from './api-keys.ts';
export {
  type AuditKind,
  type AuditLog,
  type AuditRecord,
  type BufferedAuditLogOptions,
  listAudit,
  MemoryAuditLog,
  PostgresAuditLog,
} from './audit.ts';
export { clientAddressOf, clientNameOf } from './audit-client.ts';
export { csvCell, csvLine } from './audit-csv.ts';
export {
  type AuditFilter,
  type AuditPage,
  type AuditRow,
  auditFacets,
  getAuditRow,
  queryAuditRows,
  streamAuditRows,
  tenantPeople,
} from './audit-query.ts';
export { type AuditPruneOptions, pruneAuditLog } from './audit-retention.ts';
export { type BookingRecord, BookingRepository } from './bookings.ts';
export { type CalendarFeedRecord, CalendarFeedRepository, type OpenedFeed } from './calendar-feeds.ts';
export {
  CONFIRMATION_TTL_MS,
  ConfirmationRepository,
  type ConfirmationUseResult,
  type NewConfirmation,
} from './confirmations.ts';
export {
  type ConnectionAuthKind,
  type ConnectionProviderKind,
  type ConnectionRecord,
  ConnectionRepository,
} from './connections.ts';
export { type AuditQuery, queryAudit, setCalendarEnabled } from './dashboard-queries.ts';
export { type Database, type DatabaseOptions, openDatabase, type Prisma } from './db.ts';
export { type GrantedCalendar, type KeyAccess, loadKeyAccess, loadKeyAccessById } from './key-access.ts';
export {
  type LocalEventChanges,
  type LocalEventRow,
  LocalEventStore,
  type LocalRangeQuery,
  type NewLocalEvent,
} from './local-events.ts';
export {
  DEFAULT_MIGRATIONS_DIR,
  loadMigrations,
  type Migration,
  MigrationError,
  type MigrationReport,
  migrate,
} from './migrate.ts';
export * from './mirror/index.ts';
export {
  type NewConnection,
  type OAuthClientKind,
  type OAuthClientRecord,
  type OAuthConnection,
  OAuthRepository,
  type TokenEndpointAuthMethod,
} from './oauth.ts';
export { type GrantAccess, type OAuthStateRecord, OAuthStateRepository } from './oauth-states.ts';
export {
  INVITATION_TTL_MS,
  type InvitationRecord,
  isRole,
  type LinkOutcome,
  type LinkProblem,
  type MemberRecord,
  PASSWORD_RESET_TTL_MS,
  PeopleRepository,
  ROLES,
  type Role,
} from './people.ts';
export {
  type ClassificationChange,
  type ClassificationDecision,
  type ClassificationFilter,
  type ClassificationRecord,
  ClassificationRepository,
  type ClassificationSource,
  EVENT_ID_MAX,
  MAX_PROJECTS_PER_TENANT,
  MAX_RULES_PER_TENANT,
  type ManualDecision,
  type NewProject,
  type NewRule,
  type Occurrence,
  PROJECT_CLIENT_MAX,
  PROJECT_COLOURS,
  PROJECT_NAME_MAX,
  type ProjectChanges,
  type ProjectRecord,
  ProjectRepository,
  RULE_QUERY_MAX,
  RULE_WEIGHT_MAX,
  type RuleApplication,
  type RuleAuthor,
  type RuleChanges,
  type RuleRecord,
  RuleRepository,
  RulesRepository,
  type RuleVerdict,
} from './rules.ts';
export {
  AGENT_ID_MAX,
  type BlockedOccurrence,
  type CancelOutcome,
  type Claim,
  type ClaimPlan,
  type CreatedTarget,
  DELIVERY_ERROR_MAX,
  type DeliveryAttempt,
  type DeliveryRecord,
  DeliveryRepository,
  type DeliveryStatus,
  DeliveryTargetRepository,
  MAX_MISSED_ROWS,
  type NewSchedule,
  type NewTarget,
  type OccurrenceRef,
  occurrenceId,
  SCHEDULE_PROMPT_MAX,
  type ScheduleRecord,
  ScheduleRepository,
  ScheduleRuns,
  SchedulerRepository,
  type ScheduleScope,
  type ScheduleStatus,
  type StoredSpec,
  TARGET_NAME_MAX,
  TARGET_URL_MAX,
  type TargetKind,
  type TargetRecord,
  TargetSecret,
} from './scheduler.ts';
export { keyIdOf, type SealedSecret, type SecretBinding, SecretBox } from './secret-box.ts';
export {
  generateSessionToken,
  hashSessionToken,
  SESSION_TOKEN_PATTERN,
  type SessionClient,
  type SessionRecord,
  SessionRepository,
} from './sessions.ts';
export {
  type CalendarRecord,
  type DiscoveredCalendar,
  LOCAL_ACCOUNT,
  TenancyRepository,
  type TenantRecord,
} from './tenancy.ts';
export { type TotpRecord, TotpRepository } from './totp.ts';
export { FIRST_RUN_CALENDAR, type SignUpOutcome, type UserRecord, UserRepository } from './users.ts';
