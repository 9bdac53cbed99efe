/**
 * The rules toolset's MCP resources: the query language's reference, and the timesheet as CSV
 * (`calgate://timesheet.csv?timeMin=…&timeMax=…`, optional `groupBy`, `timeZone`, `calendarIds`
 * comma-separated) over the calendars the key can read.
 */
import { CalgateError } from '@calgate/core';
import { syntaxDoc } from '@calgate/rules';
import {
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CalendarAccess } from '../../access.ts';
import type { ToolContext, Toolset } from '../../catalogue.ts';
import { rangeBound } from '../../range.ts';
import { timesheetFor } from './time-summary.ts';
import { timesheetCsv } from './timesheet.ts';

export const RULES_SYNTAX_URI = 'calgate://docs/rules-syntax';
const TIMESHEET_URI = 'calgate://timesheet.csv';
/** JSON-RPC code MCP gives an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

const timesheetQuery = z.strictObject({
  timeMin: rangeBound,
  timeMax: rangeBound,
  groupBy: z.enum(['day', 'week', 'project']).default('day'),
  timeZone: z.string().min(1).max(64).optional(),
  calendarIds: z
    .string()
    .max(10_000)
    .transform((ids) => ids.split(',').filter((id) => id !== ''))
    .optional(),
});

function hasToolset(access: CalendarAccess, toolset: Toolset): boolean {
  const { toolsets } = access.principal;
  return toolsets === undefined || toolsets.includes(toolset);
}

const hasRules = (access: CalendarAccess) => hasToolset(access, 'rules');
/** The syntax is also the language of schedule_prompt_around_events' queries. */
const readsSyntax = (access: CalendarAccess) => hasRules(access) || hasToolset(access, 'scheduler');

/** The resources a key with the rules toolset sees (the syntax alone with the scheduler toolset). */
export function rulesResources(access: CalendarAccess): {
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
} {
  if (!readsSyntax(access)) {
    return { resources: [], resourceTemplates: [] };
  }
  const resources: Resource[] = [
    {
      uri: RULES_SYNTAX_URI,
      name: 'rules-syntax',
      title: 'Classification rule syntax',
      description: 'Grammar, properties and examples of the rule query language.',
      mimeType: 'text/markdown',
    },
  ];
  const readable = hasRules(access) && access.list().some((calendar) => calendar.canRead);
  const resourceTemplates: ResourceTemplate[] = readable
    ? [
        {
          uriTemplate: `${TIMESHEET_URI}{?timeMin,timeMax,groupBy,timeZone,calendarIds}`,
          name: 'timesheet',
          title: 'Timesheet (CSV)',
          description:
            'Hours per project over readable calendars, as get_time_summary counts them. groupBy day (default), week or project; calendarIds comma-separated.',
          mimeType: 'text/csv',
        },
      ]
    : [];
  return { resources, resourceTemplates };
}

function asRpcError(error: unknown): unknown {
  if (error instanceof CalgateError) {
    const code =
      error.code === 'not_found'
        ? RESOURCE_NOT_FOUND
        : error.code === 'internal'
          ? ProtocolErrorCode.InternalError
          : ProtocolErrorCode.InvalidParams;
    return new ProtocolError(code, error.message);
  }
  return error;
}

async function timesheetResource(
  url: URL,
  context: Pick<ToolContext, 'access' | 'rules' | 'now' | 'signal'>,
): Promise<ReadResourceResult> {
  const parsed = timesheetQuery.safeParse(Object.fromEntries(url.searchParams));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || 'query';
    const what =
      issue?.code === 'unrecognized_keys'
        ? `unknown parameter(s) ${issue.keys.join(', ')}`
        : `${where} ${issue?.message ?? 'is invalid'}`;
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid timesheet URI: ${what}. Use ${TIMESHEET_URI}?timeMin=2026-04-20&timeMax=2026-04-26 (optional groupBy, timeZone, calendarIds).`,
    );
  }
  const { sheet, projects } = await timesheetFor(parsed.data, context);
  return { contents: [{ uri: url.href, mimeType: 'text/csv', text: timesheetCsv(sheet, projects) }] };
}

/** Reads one of the rules resources; an unknown URI is resource-not-found (-32002). */
export async function readRulesResource(
  uri: string,
  context: Pick<ToolContext, 'access' | 'rules' | 'now' | 'signal'>,
): Promise<ReadResourceResult> {
  if (uri === RULES_SYNTAX_URI && readsSyntax(context.access)) {
    return { contents: [{ uri, mimeType: 'text/markdown', text: syntaxDoc }] };
  }
  if (hasRules(context.access)) {
    if (uri === TIMESHEET_URI || uri.startsWith(`${TIMESHEET_URI}?`)) {
      try {
        return await timesheetResource(new URL(uri), context);
      } catch (error) {
        throw asRpcError(error);
      }
    }
  }
  throw new ProtocolError(RESOURCE_NOT_FOUND, `Unknown resource '${uri.slice(0, 200)}'.`, {
    uri: uri.slice(0, 200),
  });
}
