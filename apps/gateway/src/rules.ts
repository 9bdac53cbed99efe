import type { ClassificationRecord, ProjectRecord, RuleRecord, RulesRepository } from '@calgate/store';
import type { OccurrenceFiling, RulesProject, RulesServices, StoredRule } from '@calgate/tools';

/** Rules services for one API key: its tenant's projects, rules and classifications. */
export type RulesFactory = (key: { tenantId: string; keyId: string }) => RulesServices;

const projectOut = (record: ProjectRecord): RulesProject => ({
  id: record.id,
  name: record.name,
  client: record.client,
  colour: record.colour,
  archived: record.archived,
});

const ruleOut = (record: RuleRecord): StoredRule => ({
  id: record.id,
  projectId: record.projectId,
  query: record.query,
  weight: record.weight,
  enabled: record.enabled,
});

const filingOut = (record: ClassificationRecord): OccurrenceFiling => ({
  projectId: record.projectId,
  skip: record.skip,
  source: record.source,
  confidence: record.confidence,
  needsReview: record.needsReview,
});

/**
 * The repositories as the rules tools see them: every call scoped to the caller's tenant, rules
 * written in the caller key's name. Which calendars' occurrences a key may file or see is the
 * tools' check (CalendarAccess).
 */
export function rulesServices(repository: RulesRepository): RulesFactory {
  return ({ tenantId, keyId }) => ({
    async createProject(input) {
      return projectOut(
        await repository.projects.create(tenantId, {
          name: input.name,
          ...(input.client === undefined ? {} : { client: input.client }),
          ...(input.colour === undefined ? {} : { colour: input.colour }),
        }),
      );
    },
    async listProjects(includeArchived) {
      return (await repository.projects.list(tenantId, { includeArchived })).map(projectOut);
    },
    async createRule(input) {
      return ruleOut(
        await repository.rules.create(tenantId, {
          projectId: input.projectId,
          query: input.query,
          ...(input.weight === undefined ? {} : { weight: input.weight }),
          createdBy: { keyId },
        }),
      );
    },
    async updateRule(ruleId, changes) {
      return ruleOut(
        await repository.rules.update(
          tenantId,
          ruleId,
          Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)),
        ),
      );
    },
    async deleteRule(ruleId) {
      return ruleOut(await repository.rules.delete(tenantId, ruleId));
    },
    async listRules(projectId) {
      return (await repository.rules.list(tenantId, projectId === undefined ? {} : { projectId })).map(
        ruleOut,
      );
    },
    async votingRules() {
      return (await repository.rules.voting(tenantId)).map(ruleOut);
    },
    async filings(calendarId, eventIds) {
      const found = await repository.classifications.getMany(tenantId, calendarId, eventIds);
      return new Map([...found].map(([eventId, record]) => [eventId, filingOut(record)]));
    },
    applyVerdicts(verdicts) {
      return repository.classifications.upsertFromRules(tenantId, verdicts);
    },
    async fileManually(occurrences, choice) {
      return (await repository.classifications.setManualMany(tenantId, occurrences, choice)).map(filingOut);
    },
  });
}
