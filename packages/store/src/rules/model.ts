/** Limits and the records of projects, rules and classifications. */

export const PROJECT_NAME_MAX = 100;
export const PROJECT_CLIENT_MAX = 100;
export const RULE_QUERY_MAX = 2000;
export const RULE_WEIGHT_MAX = 1000;
export const MAX_PROJECTS_PER_TENANT = 1000;
export const MAX_RULES_PER_TENANT = 1000;
export const EVENT_ID_MAX = 2048;
/** New projects without a colour take the first of these that no live project uses. */
export const PROJECT_COLOURS = [
  '#4f46e5',
  '#059669',
  '#d97706',
  '#dc2626',
  '#0891b2',
  '#7c3aed',
  '#65a30d',
  '#db2777',
  '#475569',
  '#ea580c',
] as const;

export interface ProjectRecord {
  id: string;
  tenantId: string;
  name: string;
  client: string | null;
  /** `#rrggbb`, lowercase. */
  colour: string;
  archived: boolean;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewProject {
  name: string;
  client?: string | null;
  /** `#RRGGBB` in either case; chosen from PROJECT_COLOURS when left out. */
  colour?: string;
}

/** A null client clears it; an absent field stays as it is. */
export interface ProjectChanges {
  name?: string;
  client?: string | null;
  colour?: string;
}

/** Who wrote a rule: one API key or one dashboard user of the same tenant. */
export type RuleAuthor = { keyId: string } | { userId: string };

export interface RuleRecord {
  id: string;
  tenantId: string;
  projectId: string;
  query: string;
  weight: number;
  enabled: boolean;
  /** Null once the key is deleted, or when a user wrote the rule. */
  createdByKeyId: string | null;
  createdByUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewRule {
  projectId: string;
  query: string;
  /** Whole number, 1–1000; default 1. */
  weight?: number;
  enabled?: boolean;
  createdBy: RuleAuthor;
}

export interface RuleChanges {
  projectId?: string;
  query?: string;
  weight?: number;
  enabled?: boolean;
}

export type ClassificationSource = 'rule' | 'manual';

/**
 * How one occurrence is filed: `projectId` set → that project; `skip` → deliberately not filed;
 * neither (only from rules) → pending, the rules could not decide (no vote, a tie or a confidence
 * below 0.5). No row at all means the rules were never applied to the occurrence.
 */
export interface ClassificationRecord {
  tenantId: string;
  calendarId: string;
  eventId: string;
  projectId: string | null;
  skip: boolean;
  source: ClassificationSource;
  /** 0–1; 1 for manual rows. */
  confidence: number;
  needsReview: boolean;
  /** The occurrence's start and end. */
  start: Date;
  end: Date;
  /** The rules that voted (empty for manual rows). */
  ruleIds: string[];
  updatedAt: Date;
}

/** One event occurrence: its calendar, its id (an instance id for a recurring one) and times. */
export interface Occurrence {
  calendarId: string;
  eventId: string;
  start: Date;
  end: Date;
}

/** What scoring the rules decided for one occurrence; `projectId` null is pending. */
export interface RuleVerdict extends Occurrence {
  projectId: string | null;
  confidence: number;
  needsReview: boolean;
  ruleIds: readonly string[];
}

/** A person's decision: file into a project, or skip. */
export type ManualDecision = { projectId: string } | { skip: true };

/** The part of a classification that a person would call its outcome. */
export interface ClassificationDecision {
  projectId: string | null;
  skip: boolean;
  needsReview: boolean;
}

export interface ClassificationChange {
  calendarId: string;
  eventId: string;
  /** Null when the occurrence had no classification before. */
  before: ClassificationDecision | null;
  after: ClassificationDecision;
}

/** What `upsertFromRules` did, per occurrence of the batch. */
export interface RuleApplication {
  /** Occurrences classified for the first time. */
  created: number;
  /** Occurrences whose project, skip or needsReview changed. */
  changed: number;
  /** Same outcome as before (confidence, voting rules or times may have been refreshed). */
  unchanged: number;
  /** Manual classifications left as they were (only their times follow the occurrence). */
  keptManual: number;
  /** The created and changed occurrences, in (calendarId, eventId) order. */
  changes: ClassificationChange[];
}

export interface ClassificationFilter {
  projectId?: string;
  source?: ClassificationSource;
  needsReview?: boolean;
}
