/**
 * @calgate/tools — the MCP tool catalogue: zod schemas, annotations, handlers and the one
 * wrapper that validates, maps errors and records every call.
 */
import { type Catalogue, compileCatalogue } from './catalogue.ts';
import { AVAILABILITY_TOOLS } from './tools/availability/index.ts';
import { listCalendars } from './tools/list-calendars.ts';
import { listEvents } from './tools/list-events.ts';
import { READ_TOOLS } from './tools/read/index.ts';
import { RULES_TOOLS } from './tools/rules/index.ts';
import { SCHEDULER_TOOLS } from './tools/scheduler/index.ts';
import { setTimeZone } from './tools/set-time-zone.ts';
import { WRITE_TOOLS } from './tools/write/index.ts';

export {
  CalendarAccess,
  type CalendarHandle,
  type KeyCalendar,
  type Principal,
  type ProviderResolver,
} from './access.ts';
export { ANSWER_TOKEN_LIMIT, fitAnswer, tokenCount } from './answer-limit.ts';
export { type BudgetLimits, DEFAULT_BUDGET, WorkBudget } from './budget.ts';
export { callTool, directToolCall } from './call-tool.ts';
export {
  type BookingLedger,
  type BookingServices,
  type CalendarDirectory,
  type Catalogue,
  type CatalogueEntry,
  catalogueDocs,
  compileCatalogue,
  defineTool,
  type KeySettings,
  type LedgerBooking,
  type LedgerFilter,
  type OccurrenceFiling,
  type RulesApplication,
  type RulesProject,
  type RulesServices,
  type RulesVerdict,
  type StoredRule,
  type ToolAccess,
  type ToolContext,
  type ToolDefinition,
} from './catalogue.ts';
export { CpuTurns } from './cpu-turns.ts';
export { type ExposureNote, type Flag, screenAnswer } from './firewall/answers.ts';
export { Insiders } from './firewall/insiders.ts';
export { CachedScreener } from './firewall/screen-cache.ts';
export { detectorScreener, firewallScreener, type Screener } from './firewall/screener.ts';
export { screenText } from './firewall.ts';
export { eventTable, formatText, jsonOf, rememberAnswer, toonView } from './format.ts';
export {
  type ConfirmationStore,
  type ConfirmationUse,
  DEFAULT_HIJACK_POLICY,
  type Decision,
  type DecisionRecord,
  HIJACK_POLICIES,
  type HijackPolicy,
} from './guard/confirm.ts';
export { RISKY_TOOLS } from './guard/risky.ts';
export { isLogLevel, LOG_LEVELS, type LogLevel, type ToolLog } from './logging.ts';
export { CpuPool } from './offload/pool.ts';
export { PROMPT_PLACEHOLDERS } from './prompts.ts';
export { calendarUri, resourceCalendars } from './resources/calendars.ts';
export type {
  CreatedScheduledPrompt,
  DeliveryTargetInfo,
  LastDelivery,
  LettaAgentInfo,
  NewScheduledPrompt,
  ScheduledKind,
  ScheduledPrompt,
  ScheduleInput,
  SchedulerServices,
  SchedulerStatusInfo,
  ScheduleStatus,
  TargetTestResult,
} from './scheduler-services.ts';
export { createMcpServer, type SessionOptions, serverIcons, type ToolCallRecord } from './server.ts';
export { expansionAnswer } from './tools/availability/expansion.ts';
export {
  type ApplyRequest,
  applyRulesFor,
  checkRuleQuery,
  localDays,
  type PreviewRequest,
  previewRuleFor,
  type TimesheetRequest,
  timesheetCsv,
  timesheetFor,
  unknownProject,
} from './tools/rules/index.ts';
export { RULES_SYNTAX_URI } from './tools/rules/resources.ts';
export { asUnavailable, isTransient, retryOnce } from './transient.ts';
export { unsafeTextIn } from './validation.ts';
export { isVisible } from './visibility.ts';

export const TOOL_DEFINITIONS = [
  listCalendars,
  listEvents,
  ...READ_TOOLS,
  ...WRITE_TOOLS,
  setTimeZone,
  ...AVAILABILITY_TOOLS,
  ...RULES_TOOLS,
  ...SCHEDULER_TOOLS,
];

let compiled: Catalogue | undefined;

/** The catalogue, compiled once per process. */
export function catalogue(): Catalogue {
  compiled ??= compileCatalogue(TOOL_DEFINITIONS);
  return compiled;
}
export {
  checkEventSpec,
  EVENT_PLAN_HORIZON_MS,
  EVENT_PLAN_SWEEP_MINUTES,
  type EventOccurrencePlan,
  type EventScheduleSpec,
  MAX_EVENT_OFFSET_MINUTES,
  noPlannedEventReason,
  planEventOccurrences,
} from './event-schedule.ts';
export { ICON_NAMES, ICON_PNG_SIZE, type IconName, iconsOf } from './icons.ts';
