import { api } from '../api.ts';
import { h, when } from '../dom.ts';

interface Actor {
  id: string;
  name: string;
  prefix: string | null;
  kind: 'key' | 'app' | 'user';
}

interface Entry {
  id: string;
  kind: 'tool' | 'dashboard';
  actor: Actor | null;
  tool: string;
  target: string[];
  calendarIds: string[];
  outcome: string;
  errorCode: string | null;
  errorMessage: string | null;
  latencyMs: number;
  requestId: string | null;
  clientName: string | null;
  clientAddress: string | null;
  at: string;
}

interface Facets {
  actors: { keys: Actor[]; apps: Actor[]; users: Actor[] };
  tools: string[];
  actions: string[];
}

/** Local midnight of a date input's value as an RFC 3339 instant; `nextDay` for an inclusive end. */
function dayStart(value: string, nextDay: boolean): string {
  const start = new Date(`${value}T00:00:00`);
  if (nextDay) {
    start.setDate(start.getDate() + 1);
  }
  return start.toISOString();
}

function actorLabel(actor: Actor | null): string {
  if (actor === null) {
    return '—';
  }
  return actor.kind === 'user' ? actor.name : `${actor.name} (${actor.kind === 'app' ? 'app' : 'key'})`;
}

/**
 * Tool calls and dashboard actions, newest first, filtered by actor, tools and actions, outcome
 * and date range. A row opens its detail (request id, error text, client and its address,
 * latency); the CSV link always carries the current filters.
 */
export async function renderAudit(root: HTMLElement): Promise<void> {
  const [facets, matrix] = await Promise.all([
    api<Facets>('GET', '/audit/facets'),
    api<{ accounts: { calendars: { id: string; summary: string }[] }[] }>('GET', '/matrix'),
  ]);
  // Calendars by name where this tenant still has them; the audit row keeps only ids.
  const names = new Map(
    matrix.accounts.flatMap((account) => account.calendars.map((c) => [c.id, c.summary])),
  );
  const group = (label: string, actors: Actor[]) =>
    actors.length === 0
      ? null
      : h(
          'optgroup',
          { label },
          actors.map((a) => h('option', { value: a.id }, a.name)),
        );
  const actor = h(
    'select',
    { id: 'f-actor', name: 'actor' },
    h('option', { value: '' }, 'Anyone'),
    group('API keys', facets.actors.keys),
    group('Connected apps', facets.actors.apps),
    group('People', facets.actors.users),
  );
  const tool = h(
    'select',
    { id: 'f-tool', name: 'tool', multiple: true, size: '6', 'aria-describedby': 'f-tool-hint' },
    h(
      'optgroup',
      { label: 'Tools' },
      facets.tools.map((name) => h('option', { value: name }, name)),
    ),
    h(
      'optgroup',
      { label: 'Dashboard actions' },
      facets.actions.map((name) => h('option', { value: name }, name)),
    ),
  );
  const outcome = h(
    'select',
    { id: 'f-outcome', name: 'outcome' },
    ['', 'ok', 'error', 'denied'].map((value) =>
      h('option', { value }, value === '' ? 'Any outcome' : value),
    ),
  );
  const from = h('input', { id: 'f-from', name: 'from', type: 'date' });
  const to = h('input', { id: 'f-to', name: 'to', type: 'date' });
  const csv = h(
    'a',
    { id: 'audit-csv', class: 'button secondary', href: '/api/v1/audit.csv', download: '' },
    'Download CSV',
  );
  const rows = h('tbody', {});
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Older entries');
  const detail = h('section', {
    class: 'card',
    id: 'audit-detail',
    'aria-labelledby': 'audit-detail-title',
    hidden: true,
  });
  let cursor: string | null = null;

  /** The current filters as query parameters (shared by the list and the CSV link). */
  function filters(): URLSearchParams {
    const query = new URLSearchParams();
    if (actor.value !== '') {
      query.set('actor', actor.value);
    }
    for (const option of tool.selectedOptions) {
      query.append('tool', option.value);
    }
    if (outcome.value !== '') {
      query.set('outcome', outcome.value);
    }
    if (from.value !== '') {
      query.set('from', dayStart(from.value, false));
    }
    if (to.value !== '') {
      query.set('to', dayStart(to.value, true));
    }
    return query;
  }

  async function open(id: string, opener: HTMLElement): Promise<void> {
    const { entry } = await api<{ entry: Entry }>('GET', `/audit/${encodeURIComponent(id)}`);
    const fact = (term: string, value: string | null) => [h('dt', {}, term), h('dd', {}, value ?? '—')];
    const close = h('button', { type: 'button', class: 'secondary' }, 'Close');
    close.addEventListener('click', () => {
      detail.hidden = true;
      opener.focus();
    });
    detail.replaceChildren(
      h('h2', { id: 'audit-detail-title', tabindex: '-1' }, `${entry.tool} — ${when(entry.at)}`),
      h(
        'dl',
        { class: 'facts' },
        fact('Kind', entry.kind === 'dashboard' ? 'Dashboard action' : 'Tool call'),
        fact('Actor', actorLabel(entry.actor)),
        fact('Actor id', entry.actor?.id ?? null),
        fact('Outcome', entry.errorCode ? `${entry.outcome} (${entry.errorCode})` : entry.outcome),
        fact('Error', entry.errorMessage),
        fact('Request id', entry.requestId),
        fact('Client', entry.clientName),
        fact('Client address', entry.clientAddress),
        fact('Latency', `${entry.latencyMs} ms`),
        fact('Target', entry.target.join(', ') || null),
        fact('Calendars', entry.calendarIds.map((c) => names.get(c) ?? c).join(', ') || null),
      ),
      close,
    );
    detail.hidden = false;
    detail.querySelector('h2')?.focus();
  }

  function row(entry: Entry): HTMLTableRowElement {
    // The time is a button, so a row opens from the keyboard too; a click anywhere on it opens it.
    const opener = h(
      'button',
      { type: 'button', class: 'secondary', 'aria-controls': 'audit-detail' },
      when(entry.at),
      h('span', { class: 'sr' }, `: open entry ${entry.id}`),
    );
    const what =
      entry.kind === 'dashboard'
        ? entry.target.join(', ')
        : entry.calendarIds.map((c) => names.get(c) ?? c).join(', ');
    const tr = h(
      'tr',
      { 'data-id': entry.id, class: 'clickable' },
      h('td', {}, opener),
      h('td', {}, actorLabel(entry.actor)),
      h('th', { scope: 'row' }, entry.tool),
      h('td', {}, what || '—'),
      h(
        'td',
        {},
        h(
          'span',
          { class: `badge ${entry.outcome}` },
          entry.errorCode ? `${entry.outcome} (${entry.errorCode})` : entry.outcome,
        ),
      ),
      h('td', { class: 'num' }, `${entry.latencyMs} ms`),
    );
    tr.addEventListener('click', () => void open(entry.id, opener));
    return tr;
  }

  async function load(append: boolean): Promise<void> {
    const query = filters();
    csv.setAttribute('href', `/api/v1/audit.csv${query.size > 0 ? `?${query}` : ''}`);
    query.set('limit', '50');
    if (append && cursor !== null) {
      query.set('before', cursor);
    }
    const page = await api<{ entries: Entry[]; nextCursor: string | null }>('GET', `/audit?${query}`);
    cursor = page.nextCursor;
    more.hidden = cursor === null;
    const list = page.entries.map(row);
    if (append) {
      rows.append(...list);
    } else {
      rows.replaceChildren(
        ...(list.length === 0 ? [h('tr', {}, h('td', { colspan: '6' }, 'Nothing matches.'))] : list),
      );
    }
  }

  const form = h(
    'form',
    { class: 'card filters', 'aria-label': 'Filter the audit log' },
    h('div', {}, h('label', { for: 'f-actor' }, 'Actor'), actor),
    h(
      'div',
      {},
      h('label', { for: 'f-tool' }, 'Tools and actions'),
      tool,
      h('small', { id: 'f-tool-hint' }, ' None selected: all. Ctrl or ⌘ selects several.'),
    ),
    h('div', {}, h('label', { for: 'f-outcome' }, 'Outcome'), outcome),
    h('div', {}, h('label', { for: 'f-from' }, 'From'), from),
    h('div', {}, h('label', { for: 'f-to' }, 'To (inclusive)'), to),
    h('div', {}, h('button', { type: 'submit' }, 'Filter'), ' ', csv),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void load(false);
  });
  more.addEventListener('click', () => void load(true));
  const head = ['When', 'Actor', 'Tool or action', 'Calendars or target', 'Outcome', 'Latency'].map((t) =>
    h('th', { scope: 'col' }, t),
  );
  root.append(
    form,
    detail,
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        {},
        h('caption', {}, 'Tool calls and dashboard actions, newest first'),
        h('thead', {}, h('tr', {}, head)),
        rows,
      ),
    ),
    more,
  );
  await load(false);
}
