/**
 * Scheduled prompts at rest: delivery targets (secrets sealed with SecretBox), schedules owned by
 * the key that created them, and one delivery row per occurrence. Every method takes the tenant
 * first; an id of another tenant is `not_found`, exactly like an id that does not exist.
 */

import type { Database } from './db.ts';
import { DeliveryRepository } from './scheduler/deliveries.ts';
import { ScheduleRuns } from './scheduler/runs.ts';
import { ScheduleRepository } from './scheduler/schedules.ts';
import { DeliveryTargetRepository } from './scheduler/targets.ts';
import type { SecretBox } from './secret-box.ts';

export { DeliveryRepository } from './scheduler/deliveries.ts';
export * from './scheduler/model.ts';
export {
  type BlockedOccurrence,
  type Claim,
  type ClaimPlan,
  MAX_MISSED_ROWS,
  type OccurrenceRef,
  ScheduleRuns,
} from './scheduler/runs.ts';
export { ScheduleRepository } from './scheduler/schedules.ts';
export { DeliveryTargetRepository } from './scheduler/targets.ts';

/** The three repositories of scheduled prompts, over one database. */
export class SchedulerRepository {
  readonly targets: DeliveryTargetRepository;
  readonly schedules: ScheduleRepository;
  readonly deliveries: DeliveryRepository;
  readonly runs: ScheduleRuns;

  constructor(db: Database, box: SecretBox) {
    this.targets = new DeliveryTargetRepository(db, box);
    this.schedules = new ScheduleRepository(db);
    this.deliveries = new DeliveryRepository(db);
    this.runs = new ScheduleRuns(db);
  }
}
