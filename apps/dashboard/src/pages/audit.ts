import { api } from '../api.ts';
import { h } from '../dom.ts';

interface Entry {
  id: string;
  key: { name: string; prefix: string | null; kind?: 'key' | 'app' } | null;
  tool: string;
  calendarIds: string[];
  outcome: string;
  errorCode: string | null;
  latencyMs: number;
  at: string;
}

/** Recent tool calls, newest first, filtered by key or connected app, tool and outcome. */
export async function renderAudit(root: HTMLElement): Promise<void> {
  const [{ keys }, { apps }, matrix] = await Promise.all([
    api<{ keys: { id: string; name: string }[] }>('GET', '/keys'),
    api<{ apps: { id: string; clientName: string }[] }>('GET', '/connected-apps'),
    api<{ accounts: { calendars: { id: string; summary: string }[] }[] }>('GET', '/matrix'),
  ]);
  // Calendars by name where this tenant still has them; the audit row keeps only ids.
  const names = new Map(
    matrix.accounts.flatMap((account) => account.calendars.map((c) => [c.id, c.summary])),
  );
  const key = h(
    'select',
    { id: 'f-key', name: 'keyId' },
    h('option', { value: '' }, 'Any key or app'),
    // Connected apps call with a key of their own, so the same filter finds their calls.
    apps.length === 0
      ? keys.map((k) => h('option', { value: k.id }, k.name))
      : [
          h(
            'optgroup',
            { label: 'API keys' },
            keys.map((k) => h('option', { value: k.id }, k.name)),
          ),
          h(
            'optgroup',
            { label: 'Connected apps' },
            apps.map((a) => h('option', { value: a.id }, a.clientName)),
          ),
        ],
  );
  const tool = h('input', { id: 'f-tool', name: 'tool', placeholder: 'e.g. list_events' });
  const outcome = h(
    'select',
    { id: 'f-outcome', name: 'outcome' },
    ['', 'ok', 'error', 'denied'].map((value) =>
      h('option', { value }, value === '' ? 'Any outcome' : value),
    ),
  );
  const rows = h('tbody', {});
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Older calls');
  let cursor: string | null = null;

  async function load(append: boolean): Promise<void> {
    const query = new URLSearchParams({ limit: '50' });
    for (const [name, value] of [
      ['keyId', key.value],
      ['tool', tool.value.trim()],
      ['outcome', outcome.value],
    ] as const) {
      if (value !== '') {
        query.set(name, value);
      }
    }
    if (append && cursor !== null) {
      query.set('before', cursor);
    }
    const page = await api<{ entries: Entry[]; nextCursor: string | null }>('GET', `/audit?${query}`);
    cursor = page.nextCursor;
    more.hidden = cursor === null;
    const list = page.entries.map((entry) =>
      h(
        'tr',
        {},
        h('td', {}, new Date(entry.at).toLocaleString()),
        h('td', {}, entry.key === null ? '—' : entry.key.name),
        h('th', { scope: 'row' }, entry.tool),
        h('td', {}, entry.calendarIds.map((id) => names.get(id) ?? id).join(', ') || '—'),
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
      ),
    );
    if (append) {
      rows.append(...list);
    } else {
      rows.replaceChildren(
        ...(list.length === 0 ? [h('tr', {}, h('td', { colspan: '6' }, 'No calls match.'))] : list),
      );
    }
  }
  const form = h(
    'form',
    { class: 'card filters', 'aria-label': 'Filter the audit log' },
    h('div', {}, h('label', { for: 'f-key' }, 'Key or app'), key),
    h('div', {}, h('label', { for: 'f-tool' }, 'Tool'), tool),
    h('div', {}, h('label', { for: 'f-outcome' }, 'Outcome'), outcome),
    h('div', {}, h('button', { type: 'submit' }, 'Filter')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void load(false);
  });
  more.addEventListener('click', () => void load(true));
  const head = ['When', 'Key', 'Tool', 'Calendars', 'Outcome', 'Latency'].map((t) =>
    h('th', { scope: 'col' }, t),
  );
  root.append(
    form,
    h(
      'div',
      { class: 'scroll' },
      h('table', {}, h('caption', {}, 'Tool calls, newest first'), h('thead', {}, h('tr', {}, head)), rows),
    ),
    more,
  );
  await load(false);
}
