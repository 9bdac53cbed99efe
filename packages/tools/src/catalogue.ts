import type { SlotLock } from '@calgate/locks';
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CalendarAccess, KeyCalendar } from './access.ts';
import type { WorkBudget } from './budget.ts';
import { type Hints, listedAnnotations, listedInput, listedOutput, withoutMarkers } from './listed.ts';
import type { ToolLog } from './logging.ts';
import type { CpuPool } from './offload/pool.ts';
import type { SchedulerServices } from './scheduler-services.ts';

/**
 * Creating calendars touches Calgate's own records (the new calendar and the creating key's
 * grant), so the gateway supplies it; tools only see this interface.
 */
export interface CalendarDirectory {
  /**
   * Creates a calendar on the account behind `onAccountOf` (a calendar id the key can write), or
   * on the key's first account that can create calendars; the creating key gets read and write.
   */
  createCalendar(input: {
    summary: string;
    description?: string;
    timeZone?: string;
    onAccountOf?: string;
  }): Promise<KeyCalendar>;
}

/** A booking as the ledger keeps it. */
export interface LedgerBooking {
  id: string;
  calendarId: string;
  eventId: string;
  start: Date;
  end: Date;
  status: 'confirmed' | 'cancelled';
  /** Only when the calling key made the booking: another key's idempotency keys stay private. */
  idempotencyKey: string | null;
  requestHash: string | null;
  result: unknown;
}

/** Which bookings list_bookings asks for. */
export interface LedgerFilter {
  calendarIds: readonly string[];
  timeMin?: Date | undefined;
  timeMax?: Date | undefined;
  status?: 'confirmed' | 'cancelled' | undefined;
  limit: number;
}

/**
 * The booking ledger (Postgres, with an exclusion constraint against overlapping confirmed
 * bookings of one calendar), as the gateway supplies it: every lookup is scoped to the key's
 * tenant; callers check the key's grant on the calendar of what they get.
 */
export interface BookingLedger {
  /** Throws `conflict` for an overlapping confirmed booking, `already_exists` for a reused idempotency key. */
  confirm(input: {
    calendarId: string;
    eventId: string;
    start: Date;
    end: Date;
    idempotencyKey?: string;
    requestHash?: string;
    result?: unknown;
  }): Promise<LedgerBooking>;
  /** Confirmed bookings of the calendar overlapping [start, end). */
  overlapping(calendarId: string, start: Date, end: Date): Promise<LedgerBooking[]>;
  /** Confirmed bookings of any of the calendars overlapping [start, end), in one lookup. */
  confirmedIn(calendarIds: readonly string[], start: Date, end: Date): Promise<LedgerBooking[]>;
  /** Confirmed bookings whose event is `eventId` on the calendar. */
  byEvent(calendarId: string, eventId: string): Promise<LedgerBooking[]>;
  byId(bookingId: string): Promise<LedgerBooking | null>;
  /** Among the calling key's own bookings. */
  byIdempotencyKey(idempotencyKey: string): Promise<LedgerBooking | null>;
  list(filter: LedgerFilter): Promise<LedgerBooking[]>;
  /** False when the booking was not confirmed (already cancelled, or unknown). */
  cancel(bookingId: string): Promise<boolean>;
  /** Moves a confirmed booking; `conflict` when the new range overlaps another confirmed booking. */
  move(bookingId: string, start: Date, end: Date): Promise<boolean>;
}

/** What book_slot and the availability tools need beyond calendars. */
export interface BookingServices {
  /** Range leases per calendar (Redis across gateways, or in-process); fails closed. */
  lock: SlotLock;
  ledger: BookingLedger;
  /** LOCK_TTL_SECS in milliseconds. */
  lockTtlMs: number;
}

/** A project time is filed into, as the rules tools see it. */
export interface RulesProject {
  id: string;
  name: string;
  client: string | null;
  colour: string;
  archived: boolean;
}

/** A stored classification rule. */
export interface StoredRule {
  id: string;
  projectId: string;
  query: string;
  weight: number;
  enabled: boolean;
}

/** How one occurrence is filed: a project, `skip`, or pending (neither); by a rule or a person. */
export interface OccurrenceFiling {
  projectId: string | null;
  skip: boolean;
  source: 'rule' | 'manual';
  confidence: number;
  needsReview: boolean;
}

/** One occurrence with what scoring the rules decided for it (`projectId` null: pending). */
export interface RulesVerdict {
  calendarId: string;
  eventId: string;
  start: Date;
  end: Date;
  projectId: string | null;
  confidence: number;
  needsReview: boolean;
  ruleIds: readonly string[];
}

/** What storing a batch of verdicts did; manual filings are never changed. */
export interface RulesApplication {
  created: number;
  changed: number;
  unchanged: number;
  keptManual: number;
  changes: {
    calendarId: string;
    eventId: string;
    before: { projectId: string | null; skip: boolean; needsReview: boolean } | null;
    after: { projectId: string | null; skip: boolean; needsReview: boolean };
  }[];
}

/**
 * Projects, rules and classifications of the key's tenant, as the gateway supplies them: shared
 * by the tenant's keys, rules written in the calling key's name. Which occurrences a key may see
 * or file is the tools' check (CalendarAccess); errors are CalgateErrors (`not_found`,
 * `already_exists`, `precondition_failed`, `invalid_argument`).
 */
export interface RulesServices {
  createProject(input: {
    name: string;
    client?: string | undefined;
    colour?: string | undefined;
  }): Promise<RulesProject>;
  listProjects(includeArchived: boolean): Promise<RulesProject[]>;
  createRule(input: { projectId: string; query: string; weight?: number | undefined }): Promise<StoredRule>;
  updateRule(
    ruleId: string,
    changes: {
      projectId?: string | undefined;
      query?: string | undefined;
      weight?: number | undefined;
      enabled?: boolean | undefined;
    },
  ): Promise<StoredRule>;
  deleteRule(ruleId: string): Promise<StoredRule>;
  listRules(projectId?: string): Promise<StoredRule[]>;
  /** Enabled rules of projects that are not archived. */
  votingRules(): Promise<StoredRule[]>;
  /** The filings of these occurrences of one calendar, by event id; absent ones were never filed. */
  filings(calendarId: string, eventIds: readonly string[]): Promise<Map<string, OccurrenceFiling>>;
  applyVerdicts(verdicts: readonly RulesVerdict[]): Promise<RulesApplication>;
  /**
   * Files occurrences by hand, all alike and all or none (one event, or a series' occurrences in
   * a range); no later application of the rules changes them.
   */
  fileManually(
    occurrences: readonly { calendarId: string; eventId: string; start: Date; end: Date }[],
    choice: { projectId: string } | { skip: true },
  ): Promise<OccurrenceFiling[]>;
}

/**
 * The calling key's own settings, as the gateway supplies them: a key may change its own
 * default time zone (the one `calgate key set --time-zone` sets), nothing else.
 */
export interface KeySettings {
  /** Sets the key's time zone (an IANA name, already checked); later requests see it. Returns the zone it had. */
  setTimeZone(timeZone: string): Promise<{ previous: string | null }>;
}

/** What a handler gets besides its arguments. */
export interface ToolContext {
  access: CalendarAccess;
  requestId: string;
  signal: AbortSignal;
  now(): Date;
  /** Reports progress when the client asked for it (a `progressToken`); a no-op otherwise. */
  progress(done: number, total?: number, message?: string): Promise<void>;
  directory: CalendarDirectory | undefined;
  /** Locks and the ledger for book_slot; absent where the gateway has none (the tool answers 'unavailable'). */
  booking?: BookingServices | undefined;
  /** Projects, rules and classifications; absent where the gateway has none (the tools answer 'unavailable'). */
  rules?: RulesServices | undefined;
  /** Scheduled prompts and delivery targets of the key; absent where the gateway has none (the tools answer 'unavailable'). */
  scheduler?: SchedulerServices | undefined;
  /** The tools/call request's `_meta` (a client may name its agent there), when it carried one. */
  meta?: Record<string, unknown> | undefined;
  /** The gateway's external base URL (PUBLIC_URL, no trailing slash), for links to Calgate pages. */
  publicUrl?: string | undefined;
  /** What the request may still cost; tools whose cost is known up front spend it before working. */
  budget: WorkBudget;
  /** Worker threads for CPU-bound pure work; absent, the work runs in-process. */
  cpu?: CpuPool | undefined;
  /** Sends the client a log message at or above the level its key set; a no-op when none is set. */
  log?: ToolLog | undefined;
  /** The calling key's own settings; absent where the gateway has none (the tool answers 'unavailable'). */
  keySettings?: KeySettings | undefined;
  /** The outbound URL policy for addresses a call names (import_events' url): OUTBOUND_ALLOW_PRIVATE. */
  outbound?: { allowPrivate: boolean } | undefined;
  /** Adds a setting the call changed (`timeZone=Europe/Berlin`) to its audit row; never secrets or free text. */
  audit?: ((change: string) => void) | undefined;
}

/** Which grant a key needs for a tool to be offered at all. */
export type ToolAccess = 'none' | 'read' | 'write';

/**
 * The group a tool is switched on by: a key sees only the tools of the toolsets it has, so the
 * catalogue can grow without every agent paying for every tool in its context.
 */
export type Toolset = 'calendar' | 'booking' | 'search' | 'rules' | 'scheduler' | 'ics';

export interface ToolDefinition<In extends z.ZodObject = z.ZodObject, Out extends z.ZodObject = z.ZodObject> {
  name: string;
  toolset: Toolset;
  title: string;
  /** When to use the tool, in a sentence or two: tools/list sends it to every agent. */
  description: string;
  /** What else an agent may need (limits, edge cases): in /api/docs and `calgate://docs/tools`, not tools/list. */
  notes?: string;
  access: ToolAccess;
  annotations: Hints;
  input: In;
  output: Out;
  /**
   * What a person asks for when this tool is the one to use, in their words (/api/docs shows it
   * with the example); a test checks that a search of the tools' descriptions picks this tool for it.
   */
  exampleIntent: string;
  /** A realistic call, shown in /api/docs and checked against `input` by the tests. */
  example: z.input<In>;
  /**
   * What the example returns (the fields that matter), as /api/docs shows it: on calendars in
   * America/New_York with nothing else in the way, ids from earlier calls standing in for the
   * example's. The docs test runs every example and checks its answer contains this.
   */
  exampleResult?: Record<string, unknown>;
  run(args: z.output<In>, context: ToolContext): Promise<z.output<Out>>;
  /**
   * Pure CPU work with no I/O (recurrence expansion): runs in its turn, one at a time (CpuTurns).
   * A function decides by the call's arguments (a small page costs less than waiting for a turn).
   */
  cpuBound?: boolean | ((args: z.output<In>) => boolean);
  /** The text content; JSON of the structured result when absent. */
  text?(result: z.output<Out>, args: z.output<In>): string;
  /**
   * Bulk answers: MCP 2026-07-28 clients get no text that would only repeat structuredContent as
   * JSON (the specification asks for that copy "for backwards compatibility", with clients that
   * predate structured content, which a 2026-07-28 client is not).
   */
  structuredOnlyFor2026?: boolean;
}

/** Keeps a definition's generic types while collecting it into the catalogue. */
export function defineTool<In extends z.ZodObject, Out extends z.ZodObject>(
  definition: ToolDefinition<In, Out>,
): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

type JsonSchema = Record<string, unknown>;

/**
 * A tool with its JSON Schemas computed once per process: the full ones for /api/docs and the
 * `calgate://docs/tools` resource, the lean ones (`listed`, see listed.ts) for tools/list.
 */
export interface CatalogueEntry {
  definition: ToolDefinition;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  listed: {
    inputSchema: JsonSchema & { type: 'object' };
    outputSchema: JsonSchema & { type: 'object' };
    annotations: ToolAnnotations;
  };
}

export interface Catalogue {
  entries: readonly CatalogueEntry[];
  get(name: string): CatalogueEntry | undefined;
}

/**
 * Output schemas say what Calgate returns, by name and type. `additionalProperties: false` and
 * `required` on every object add nothing an agent acts on (an absent optional field is absent
 * either way), so both are dropped, here and in what tools/list sends (listed.ts); a client
 * validating structuredContent against the schema still checks every field's type.
 */
function withoutClosedObjects(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(withoutClosedObjects);
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const noise =
      (key === 'additionalProperties' && child === false) || (key === 'required' && Array.isArray(child));
    if (!noise) {
      out[key] = withoutClosedObjects(child);
    }
  }
  return out;
}

/**
 * Length limits that only guard against abuse (`minLength: 1`, `maxLength` of 1,000 or more on
 * ids and free text) tell an agent nothing it would act on (tools/list leaves out every guard
 * limit, listed.ts); the handlers still enforce them, with a message that names the limit.
 */
function withoutGuardLimits(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(withoutGuardLimits);
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const guard =
      (key === 'minLength' && child === 1) ||
      (key === 'maxLength' && typeof child === 'number' && child >= 1000);
    if (!guard) {
      out[key] = withoutGuardLimits(child);
    }
  }
  return out;
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema & { type: 'object' } {
  let json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  if (io === 'output') {
    json = withoutClosedObjects(json) as JsonSchema;
  }
  json = withoutGuardLimits(json) as JsonSchema;
  return { ...json, type: 'object' };
}

export function compileCatalogue(definitions: readonly ToolDefinition[]): Catalogue {
  const entries = definitions.map((definition) => {
    // With the markers of listed.ts, which only tools/list reads.
    const marked = toJsonSchema(definition.input, 'input');
    const inputSchema = withoutMarkers(marked) as JsonSchema & { type: 'object' };
    const outputSchema = withoutMarkers(toJsonSchema(definition.output, 'output')) as JsonSchema & {
      type: 'object';
    };
    const listed = {
      inputSchema: listedInput(marked) as JsonSchema & { type: 'object' },
      outputSchema: listedOutput(outputSchema),
      annotations: listedAnnotations(definition.annotations),
    };
    return { definition, inputSchema, outputSchema, listed };
  });
  const byName = new Map(entries.map((entry) => [entry.definition.name, entry]));
  if (byName.size !== entries.length) {
    throw new Error('Duplicate tool names in the catalogue');
  }
  return { entries, get: (name) => byName.get(name) };
}

/** The machine-readable reference served at GET /api/docs. */
export function catalogueDocs(catalogue: Catalogue) {
  return catalogue.entries.map(({ definition, inputSchema, outputSchema }) => ({
    name: definition.name,
    toolset: definition.toolset,
    title: definition.title,
    description: definition.description,
    ...(definition.notes === undefined ? {} : { notes: definition.notes }),
    requires: definition.access,
    inputSchema,
    outputSchema,
    annotations: { title: definition.title, ...definition.annotations },
    example: {
      tool: definition.name,
      intent: definition.exampleIntent,
      arguments: definition.example,
      ...(definition.exampleResult === undefined ? {} : { result: definition.exampleResult }),
    },
  }));
}
