/**
 * What a session offers besides tools: resources (the rules documents, the key's calendars, the
 * tool reference), prompts and argument completion, each following the key's toolsets and grants.
 */

import { CalgateError } from '@calgate/core';
import { ProtocolErrorCode, type ReadResourceResult, type Server } from '@modelcontextprotocol/server';
import type { CatalogueEntry } from './catalogue.ts';
import { complete } from './completion.ts';
import { readScreen, recordExposures } from './firewall/read-side.ts';
import { type IconName, iconsOf } from './icons.ts';
import { getPrompt, listPrompts } from './prompts.ts';
import { exportTemplates, readCalendarExport } from './resources/calendar-export.ts';
import { calendarResources, readCalendarResource } from './resources/calendars.ts';
import { readToolsDoc, toolsDocResources } from './resources/tools-doc.ts';
import { rpcError } from './rpc-error.ts';
import type { SessionOptions } from './server.ts';
import { readRulesResource, rulesResources } from './tools/rules/resources.ts';
import { asUnavailable, retryOnce } from './transient.ts';

/**
 * A failed resource read as a JSON-RPC error: Calgate's own errors keep their message, anything
 * unexpected is logged and answered with the request id only.
 */
function readFailure(thrown: unknown, options: SessionOptions): unknown {
  const error = asUnavailable(thrown, 'resources/read', options.requestId);
  if (typeof (error as { code?: unknown }).code === 'number') {
    return error;
  }
  if (error instanceof CalgateError) {
    return rpcError(ProtocolErrorCode.InternalError, error.message);
  }
  options.onInternalError?.(error, 'resources/read');
  return rpcError(
    ProtocolErrorCode.InternalError,
    `Calgate failed to read the resource (request ${options.requestId}).`,
  );
}

/**
 * A calendar resource with its events' text screened as tool answers are (firewall/read-side.ts),
 * what it showed recorded as tool answers' exposures are.
 */
async function screenedCalendar(
  read: ReadResourceResult,
  options: SessionOptions,
): Promise<ReadResourceResult> {
  const contents = [];
  for (const content of read.contents) {
    if (!('text' in content) || typeof content.text !== 'string') {
      contents.push(content);
      continue;
    }
    const body = JSON.parse(content.text) as { calendar?: { id?: string } };
    const { answer, exposures } = readScreen(body, options, {});
    if (exposures.length > 0) {
      const calendarId = body.calendar?.id ?? '';
      await recordExposures(
        options,
        'resources/read',
        exposures.map((exposure) => ({ ...exposure, calendarId: exposure.calendarId || calendarId })),
      );
    }
    contents.push(answer === body ? content : { ...content, text: JSON.stringify(answer) });
  }
  return { ...read, contents };
}

/** Resources: rules documents, the key's readable calendars, and the reference of its tools. */
export function registerResources(
  server: Server,
  options: SessionOptions,
  visible: readonly CatalogueEntry[],
): void {
  const now = options.now ?? (() => new Date());
  const rules = rulesResources(options.access);
  const calendars = calendarResources(options.access);
  // Each resource shows the icon of what it belongs to (see icons.ts).
  const icon = <T extends object>(name: IconName) => {
    const icons = iconsOf(options.publicUrl, name);
    return (item: T): T => (icons.length === 0 ? item : { ...item, icons });
  };
  server.setRequestHandler('resources/list', () => ({
    resources: [
      ...toolsDocResources(visible).map(icon('calgate')),
      ...rules.resources.map(icon('rules')),
      ...calendars.resources.map(icon('calendar')),
    ],
  }));
  server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: [
      ...rules.resourceTemplates.map(icon('rules')),
      ...calendars.resourceTemplates.map(icon('calendar')),
      ...exportTemplates(options.access).map(icon('calendar')),
    ],
  }));
  server.setRequestHandler('resources/read', async (request, ctx) => {
    const { signal } = ctx.mcpReq;
    const { uri } = request.params;
    const doc = readToolsDoc(uri, visible, options.publicUrl);
    if (doc !== undefined) {
      return doc;
    }
    try {
      // The calendar as iCalendar text: a file, not an answer of tool-shaped events to screen.
      const exported = await readCalendarExport(uri, { access: options.access, signal });
      if (exported !== undefined) {
        return exported;
      }
      // A read is safe to repeat: one that met a database or cache restart is retried once.
      const calendar = await retryOnce(
        () => readCalendarResource(uri, { access: options.access, now, signal }),
        { signal },
      );
      if (calendar !== undefined) {
        return await screenedCalendar(calendar, options);
      }
    } catch (thrown) {
      throw readFailure(thrown, options);
    }
    return readRulesResource(uri, {
      access: options.access,
      rules: options.rules,
      now,
      signal,
    });
  });
}

/** Prompts, and completion of their arguments and of the calendar template's id. */
export function registerPrompts(
  server: Server,
  options: SessionOptions,
  visible: readonly CatalogueEntry[],
): void {
  const context = {
    access: options.access,
    now: options.now ?? (() => new Date()),
    visible: new Set(visible.map((entry) => entry.definition.name)),
    rules: options.rules,
  };
  const icons = iconsOf(options.publicUrl, 'calgate');
  server.setRequestHandler('prompts/list', () => ({
    prompts: listPrompts(context).map((prompt) => (icons.length === 0 ? prompt : { ...prompt, icons })),
  }));
  server.setRequestHandler('prompts/get', (request) =>
    getPrompt(request.params.name, request.params.arguments, context),
  );
  server.setRequestHandler('completion/complete', (request) => complete(request.params, context));
}
