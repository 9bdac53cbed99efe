/**
 * Projects, classification rules and the classification of each event occurrence. Every method
 * takes the tenant first and reads or changes only that tenant's rows: an id of another tenant is
 * `not_found`, exactly like an id that does not exist. The rules language itself is not parsed
 * here; callers check a query before saving it.
 */

import type { Database } from './db.ts';
import { ClassificationRepository } from './rules/classifications.ts';
import { ProjectRepository } from './rules/projects.ts';
import { RuleRepository } from './rules/stored-rules.ts';

export { ClassificationRepository } from './rules/classifications.ts';
export * from './rules/model.ts';
export { ProjectRepository } from './rules/projects.ts';
export { RuleRepository } from './rules/stored-rules.ts';

/** The three repositories of classification, over one database. */
export class RulesRepository {
  readonly projects: ProjectRepository;
  readonly rules: RuleRepository;
  readonly classifications: ClassificationRepository;

  constructor(db: Database) {
    this.projects = new ProjectRepository(db);
    this.rules = new RuleRepository(db);
    this.classifications = new ClassificationRepository(db);
  }
}
