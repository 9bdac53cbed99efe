/**
 * Scoring: every enabled rule that matches votes its weight for its project; the leading project's
 * share of all votes is the confidence. Below 0.5, or a tie for first place, leaves the occurrence
 * pending; from 0.5 it is classified, flagged for review below 0.8.
 */
import type { EventOccurrence, PreparedOccurrence } from './occurrence.ts';
import { prepareOccurrence } from './occurrence.ts';
import type { CompiledQuery } from './query.ts';

/** Below this confidence an occurrence stays pending. */
export const REVIEW_THRESHOLD = 0.5;
/** From this confidence a classification needs no review. */
export const CONFIDENT_THRESHOLD = 0.8;
const EPSILON = 1e-9;

export interface ScoringRule {
  id: string;
  projectId: string;
  /** The rule's vote; 1 when left out. Rules weighing zero, less, or not a finite number do not vote. */
  weight?: number;
  /** Disabled rules do not vote; enabled when left out. */
  enabled?: boolean;
  query: CompiledQuery;
}

export interface ProjectVote {
  projectId: string;
  score: number;
  /** The matching rules that voted for the project. */
  ruleIds: string[];
}

export interface Classification {
  /** The winning project, or null when the occurrence stays pending. */
  projectId: string | null;
  /** The leading project's score over the total score (0 when no rule matched). */
  confidence: number;
  /** Classified, but with a confidence below 0.8. */
  needsReview: boolean;
  /** Why: a confident or reviewable winner, nothing matched, a tie for first place, or too little confidence. */
  outcome: 'classified' | 'no_match' | 'tie' | 'low_confidence';
  /** Every project that received votes, highest score first. */
  votes: ProjectVote[];
}

/** Classifies one occurrence by the rules; pure, and the same answer for the same inputs. */
export function classify(
  occurrence: EventOccurrence | PreparedOccurrence,
  rules: readonly ScoringRule[],
): Classification {
  const prepared = prepareOccurrence(occurrence);
  const byProject = new Map<string, ProjectVote>();
  let total = 0;
  for (const rule of rules) {
    const weight = rule.weight ?? 1;
    if (rule.enabled === false || !Number.isFinite(weight) || weight <= 0 || !rule.query.matches(prepared)) {
      continue;
    }
    let vote = byProject.get(rule.projectId);
    if (vote === undefined) {
      vote = { projectId: rule.projectId, score: 0, ruleIds: [] };
      byProject.set(rule.projectId, vote);
    }
    vote.score += weight;
    vote.ruleIds.push(rule.id);
    total += weight;
  }
  const votes = [...byProject.values()].sort(
    (a, b) => b.score - a.score || (a.projectId < b.projectId ? -1 : a.projectId > b.projectId ? 1 : 0),
  );
  const [first, second] = votes;
  if (first === undefined) {
    return { projectId: null, confidence: 0, needsReview: false, outcome: 'no_match', votes };
  }
  const confidence = first.score / total;
  if (second !== undefined && Math.abs(second.score - first.score) <= EPSILON * total) {
    return { projectId: null, confidence, needsReview: false, outcome: 'tie', votes };
  }
  if (confidence < REVIEW_THRESHOLD - EPSILON) {
    return { projectId: null, confidence, needsReview: false, outcome: 'low_confidence', votes };
  }
  return {
    projectId: first.projectId,
    confidence,
    needsReview: confidence < CONFIDENT_THRESHOLD - EPSILON,
    outcome: 'classified',
    votes,
  };
}
