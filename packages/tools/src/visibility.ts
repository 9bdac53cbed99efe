/**
 * Which catalogued tools a key is offered (its toolsets and grants), and why a hidden one is
 * hidden, phrased so an agent can pass it on.
 */
import { type CalendarAccess, readOnlyForCalgate } from './access.ts';
import type { CatalogueEntry } from './catalogue.ts';

/** Whether the key has switched on the toolset the tool belongs to. */
function inToolsets(entry: CatalogueEntry, access: CalendarAccess): boolean {
  const { toolsets } = access.principal;
  return toolsets === undefined || toolsets.includes(entry.definition.toolset);
}

/** Whether a key with these toolsets and grants is offered the tool at all. */
export function isVisible(entry: CatalogueEntry, access: CalendarAccess): boolean {
  return inToolsets(entry, access) && hasGrantFor(entry, access);
}

function hasGrantFor(entry: CatalogueEntry, access: CalendarAccess): boolean {
  switch (entry.definition.access) {
    case 'none':
      return true;
    case 'read':
      return access.list().some((calendar) => calendar.canRead);
    case 'write':
      return access.hasWritable();
  }
}

/** Names of at most a few calendars, for a message. */
function nameSome(names: readonly string[]): string {
  const shown = names.slice(0, 5).map((name) => `'${name}'`);
  return names.length > shown.length
    ? `${shown.join(', ')} and ${names.length - shown.length} more`
    : shown.join(', ');
}

/**
 * Why a catalogued tool is hidden from this key, phrased so an agent can pass it on: which grant
 * is missing and who can give it.
 */
function missingGrantMessage(entry: CatalogueEntry, access: CalendarAccess): string {
  const { name } = entry.definition;
  const need = entry.definition.access === 'write' ? 'Write' : 'Read';
  const calendars = access.list();
  let has = 'this key has no calendar grants';
  if (need === 'Write' && calendars.length > 0) {
    const readOnly = calendars.filter((calendar) => !calendar.canWrite).map((calendar) => calendar.summary);
    const disabled = calendars
      .filter((calendar) => calendar.canWrite && !calendar.enabled)
      .map((calendar) => calendar.summary);
    has = [
      readOnly.length > 0 ? `this key has Read only on ${nameSome(readOnly)}` : '',
      disabled.length > 0 ? `Write only on disabled calendars (${nameSome(disabled)})` : '',
    ]
      .filter((part) => part !== '')
      .join('; ');
  }
  // Where Calgate itself may only read (a read-only Google connection), ticking Write cannot help.
  const readOnlyAccounts =
    need === 'Write'
      ? [...new Set(calendars.filter((c) => !c.canWrite && readOnlyForCalgate(c)).map((c) => c.accountEmail))]
      : [];
  const upgrade =
    readOnlyAccounts.length > 0
      ? ` Calgate has read-only access to ${nameSome(readOnlyAccounts)}: upgrade it on the Accounts page (Allow writing) first.`
      : '';
  return `${name} needs ${need} on at least one calendar; ${has}. Ask the owner to tick ${need} in the dashboard.${upgrade}`;
}

/**
 * Why a catalogued tool is hidden from this key: a toolset it has not switched on (named, with the
 * ways to switch it on), else a missing grant.
 */
export function hiddenMessage(entry: CatalogueEntry, access: CalendarAccess): string {
  if (inToolsets(entry, access)) {
    return missingGrantMessage(entry, access);
  }
  const { name, toolset } = entry.definition;
  const { keyId, toolsets = [], app = false } = access.principal;
  const wanted = [...toolsets, toolset].join(',');
  const has = toolsets.length === 0 ? 'none' : toolsets.join(', ');
  if (app) {
    // A connected app's toolsets are what the person ticked at consent; approving it again
    // replaces them (an API key's settings and the CLI do not apply to it).
    return `${name} is in the '${toolset}' toolset, which this connected app was not given when it was approved (its toolsets: ${has}). Connect the app again and tick '${toolset}' on Calgate's consent page; approving it again replaces its earlier choices.`;
  }
  return `${name} is in the '${toolset}' toolset, which this API key has not switched on (its toolsets: ${has}). Ask the owner to tick '${toolset}' for this key on the dashboard's API keys page, or run \`calgate key set --key ${keyId} --toolsets ${wanted}\`.`;
}
