import { api } from '../api.ts';
import { h, notice } from '../dom.ts';
import { zonePicker } from '../zone-picker.ts';
import { accountName } from './overview.ts';
import { workspaceZone } from './workspace.ts';

/** A live key with what a person set for it. */
export interface KeyDefaultsRow {
  id: string;
  name: string;
  defaultCalendarId: string | null;
  timeZone: string | null;
  toolsets: string[];
  /** What risky actions need after the key's agent was shown suspicious content. */
  hijackPolicy?: string;
}

/** The hijack policies, as the selects for keys, connected apps and consent offer them. */
export const HIJACK_POLICY_CHOICES: [value: string, label: string][] = [
  ['ask', 'Ask'],
  ['strict', 'Strict'],
  ['off', 'Off'],
];

/** What each toolset offers an agent, for the explanation above the table. */
const TOOLSET_HINTS: Record<string, string> = {
  calendar: 'events and calendars',
  booking: 'free slots, availability and bookings',
  search: 'search and fetch, for ChatGPT connectors and deep research',
  rules: 'projects and the rules that file time',
  scheduler: 'prompts scheduled for later, delivered to webhooks or Letta agents',
  ics: 'importing iCalendar (.ics) files and feeds',
};

interface Matrix {
  accounts: {
    connection: { id: string; provider: string; accountEmail: string | null };
    calendars: { id: string; summary: string }[];
  }[];
  grants: { keyId: string; calendarId: string; canRead: boolean }[];
}

interface Choice {
  id: string;
  label: string;
}

/** The calendars each key may read, labelled with their account, in the order of the matrix. */
function readableByKey(matrix: Matrix): Map<string, Choice[]> {
  const byKey = new Map<string, Choice[]>();
  for (const { connection, calendars } of matrix.accounts) {
    const account = accountName(connection);
    for (const calendar of calendars) {
      // A Google primary calendar is named after its account.
      const label = calendar.summary === account ? account : `${calendar.summary} (${account})`;
      for (const grant of matrix.grants) {
        if (grant.calendarId === calendar.id && grant.canRead) {
          byKey.set(grant.keyId, [...(byKey.get(grant.keyId) ?? []), { id: calendar.id, label }]);
        }
      }
    }
  }
  return byKey;
}

function describeToolset(toolset: string): string {
  const hint = TOOLSET_HINTS[toolset];
  return hint === undefined ? toolset : `${toolset} (${hint})`;
}

/**
 * Per key: the default calendar (what `primary` means to its agent) among the calendars it can
 * read, its time zone and its toolsets. Only what was changed is sent; an empty field goes back
 * to automatic.
 */
export async function renderKeyDefaults(
  keys: readonly KeyDefaultsRow[],
  /** Every toolset a key can have, in the server's order. */
  toolsets: readonly string[],
  /** A live region that outlives the redraw after a save (moved into each new drawing). */
  status: HTMLElement,
  reload: () => Promise<void>,
): Promise<HTMLElement> {
  const [matrix, workspace] = await Promise.all([api<Matrix>('GET', '/matrix'), workspaceZone()]);
  const readable = readableByKey(matrix);
  // What a key without a zone of its own answers in.
  const inherited = workspace === null ? 'the default calendar’s' : `the workspace’s (${workspace})`;

  function row(key: KeyDefaultsRow): HTMLElement {
    const choices = readable.get(key.id) ?? [];
    const known =
      key.defaultCalendarId === null || choices.some((choice) => choice.id === key.defaultCalendarId);
    const select = h(
      'select',
      { 'aria-label': `Default calendar for ${key.name}` },
      h('option', { value: '' }, 'Automatic'),
      choices.map((choice) =>
        h('option', { value: choice.id, selected: choice.id === key.defaultCalendarId }, choice.label),
      ),
      known
        ? null
        : h(
            'option',
            { value: key.defaultCalendarId ?? '', selected: true },
            `${key.defaultCalendarId} (no longer readable: Automatic applies)`,
          ),
    );
    const zone = zonePicker({
      id: `zone-${key.id}`,
      label: `Time zone for ${key.name}`,
      value: key.timeZone,
      empty: `Key default: ${inherited}`,
    });
    const boxes = toolsets.map((toolset) =>
      h('input', {
        type: 'checkbox',
        value: toolset,
        checked: key.toolsets.includes(toolset),
        'aria-label': `Toolset ${toolset} for ${key.name}`,
      }),
    );
    const ticked = () => boxes.filter((box) => box.checked).map((box) => box.value);
    const policy = key.hijackPolicy ?? 'ask';
    const guard = h(
      'select',
      { 'aria-label': `After suspicious content for ${key.name}` },
      HIJACK_POLICY_CHOICES.map(([value, label]) =>
        h('option', { value, selected: value === policy }, label),
      ),
    );
    async function save(): Promise<void> {
      const body: {
        defaultCalendarId?: string | null;
        timeZone?: string | null;
        toolsets?: string[];
        hijackPolicy?: string;
      } = {};
      if (select.value !== (key.defaultCalendarId ?? '')) {
        body.defaultCalendarId = select.value === '' ? null : select.value;
      }
      if (zone.value() !== key.timeZone) {
        body.timeZone = zone.value();
      }
      if (ticked().join(',') !== key.toolsets.join(',')) {
        body.toolsets = ticked();
      }
      if (guard.value !== policy) {
        body.hijackPolicy = guard.value;
      }
      if (Object.keys(body).length === 0) {
        status.replaceChildren(notice(`Nothing to save for ${key.name}.`));
        return;
      }
      let result: HTMLElement;
      try {
        const { key: saved } = await api<{ key: KeyDefaultsRow }>('PATCH', `/keys/${key.id}`, body);
        const calendar =
          saved.defaultCalendarId === null
            ? 'automatic'
            : (choices.find((choice) => choice.id === saved.defaultCalendarId)?.label ??
              saved.defaultCalendarId);
        const sets = body.toolsets === undefined ? '' : `, toolsets ${saved.toolsets.join(', ')}`;
        const guarded =
          body.hijackPolicy === undefined ? '' : `, after suspicious content ${saved.hijackPolicy}`;
        result = notice(
          `Saved ${key.name}: default calendar ${calendar}, time zone ${saved.timeZone ?? inherited}${sets}${guarded}.`,
        );
      } catch (error) {
        result = notice(error instanceof Error ? error.message : String(error), 'error');
      }
      // Announced once the page shows the new state.
      await reload();
      status.replaceChildren(result);
    }
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, key.name),
      h(
        'td',
        {},
        choices.length === 0
          ? h('span', { class: 'muted' }, 'No calendar grants yet (see Permissions)')
          : select,
      ),
      h('td', {}, zone.element),
      h(
        'td',
        {},
        boxes.map((box) => h('label', { class: 'toggle' }, box, ` ${box.value}`)),
      ),
      h('td', {}, guard),
      h(
        'td',
        {},
        h('button', { type: 'button', class: 'secondary', onclick: () => void save() }, `Save ${key.name}`),
      ),
    );
  }

  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'defaults-title' },
    h('h2', { id: 'defaults-title' }, 'Default calendar, time zone, toolsets and confirmations'),
    h(
      'p',
      {},
      `The default calendar is what calendarId “primary” means for the key’s agent. Automatic: the primary calendar of the first connected Google account the key can read, else the first calendar it can read. The time zone is used where a request names none; empty means ${inherited}.`,
    ),
    h(
      'p',
      {},
      `Toolsets choose which tools the key’s agent sees (fewer tools leave more of its context for the work): ${toolsets.map(describeToolset).join(', ')}.`,
    ),
    h(
      'p',
      {},
      'After suspicious content: once the key’s agent has read calendar text Calgate withheld, or an invitation from outside your organisation, deleting events, batch changes, inviting outsiders and schedules to named targets need your confirmation. Ask: the app shows you a form when it can, else you confirm here under “Waiting for confirmation”. Strict: always here. Off: no check.',
    ),
    status,
    keys.length === 0
      ? h('p', {}, 'No active keys.')
      : h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            {},
            h('caption', {}, 'Defaults of your active keys'),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Key', 'Default calendar', 'Time zone', 'Toolsets', 'After suspicious content', 'Save'].map(
                  (t) => h('th', { scope: 'col' }, t),
                ),
              ),
            ),
            h('tbody', {}, keys.map(row)),
          ),
        ),
  );
}
