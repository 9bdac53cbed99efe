import { api } from '../api.ts';
import { type ConfirmOptions, confirmDialog, h, notice } from '../dom.ts';
import { feedControl } from './feed.ts';
import { accountName } from './overview.ts';

interface Calendar {
  id: string;
  summary: string;
  enabled: boolean;
  accessRole: string;
}
interface Matrix {
  accounts: {
    connection: { id: string; provider: string; accountEmail: string | null; status: string };
    calendars: Calendar[];
  }[];
  /** API keys, then connected apps (OAuth connections), live ones only. */
  keys: Holder[];
  grants: { keyId: string; calendarId: string; canRead: boolean; canWrite: boolean }[];
}

interface Holder {
  id: string;
  name: string;
  prefix: string | null;
  kind?: 'key' | 'app';
}

/** How a column is named in labels and messages: apps are marked so a key of the same name differs. */
const subject = (holder: Holder) => (holder.kind === 'app' ? `${holder.name} (app)` : holder.name);

const writable = (calendar: Calendar) => calendar.accessRole === 'owner' || calendar.accessRole === 'writer';

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** What a bulk change of one key's (or app's) column asks and says will happen. */
function keyQuestion(name: string, access: 'write' | 'read' | 'none', calendars: number): ConfirmOptions {
  const all = calendars === 1 ? 'the 1 calendar' : `all ${plural(calendars, 'calendar')}`;
  if (access === 'write') {
    return {
      question: `Give Write on ${all} to '${name}'?`,
      detail: `Its agents may then create, change and delete events on ${all} (Read only where the account may not write). This replaces what it has now.`,
      confirm: 'Give Write',
    };
  }
  if (access === 'read') {
    return {
      question: `Give Read on ${all} to '${name}'?`,
      detail: `Its agents may read ${all} and write none: any Write it has now is removed.`,
      confirm: 'Give Read',
    };
  }
  return {
    question: `Remove '${name}' from ${all}?`,
    detail: 'Its agents can then read and write no calendar until you grant one again.',
    confirm: 'Remove access',
    danger: true,
  };
}

/** What a bulk change of one calendar's row asks; connected apps are never swept in. */
function calendarQuestion(summary: string, access: 'write' | 'read' | 'none', keys: number): ConfirmOptions {
  const all = keys === 1 ? 'the 1 API key' : `all ${plural(keys, 'API key')}`;
  return access === 'none'
    ? {
        question: `Remove ${all} from '${summary}'?`,
        detail: 'No API key can read or write it afterwards. Connected apps keep what their users approved.',
        confirm: 'Remove access',
        danger: true,
      }
    : {
        question: `Give Write on '${summary}' to ${all}?`,
        detail:
          'Their agents may then create, change and delete its events (Read only if the account may not write). Connected apps keep what their users approved.',
        confirm: 'Give Write',
      };
}

/**
 * Calendars grouped by account × keys and connected apps, with Read and Write toggles; write
 * implies read. "All keys" / "No key" per calendar leave apps alone: an app keeps the calendars
 * its user approved unless changed in its own column.
 */
export async function renderMatrix(root: HTMLElement): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const body = h('div', {});
  root.append(
    h(
      'p',
      {},
      'Tick what each key and connected app may do. Write includes Read. Changes apply on the next call.',
    ),
    status,
    body,
  );

  async function change(work: () => Promise<unknown>, message: string): Promise<void> {
    let result: HTMLElement;
    try {
      await work();
      result = notice(message);
    } catch (error) {
      result = notice(error instanceof Error ? error.message : String(error), 'error');
    }
    // Announced once the table shows the new state.
    await load();
    status.replaceChildren(result);
  }

  function cells(matrix: Matrix, calendar: Calendar): HTMLElement[] {
    return matrix.keys.map((key) => {
      const grant = matrix.grants.find((g) => g.keyId === key.id && g.calendarId === calendar.id);
      const read = grant?.canRead ?? false;
      const write = grant?.canWrite ?? false;
      const name = subject(key);
      const put = (next: { read: boolean; write: boolean }) =>
        void change(
          () => api('PUT', '/grants', { keyId: key.id, calendarId: calendar.id, ...next }),
          `${name} on ${calendar.summary}: ${next.write ? 'read and write' : next.read ? 'read' : 'no access'}.`,
        );
      const readBox = h('input', {
        type: 'checkbox',
        checked: read,
        'aria-label': `Read ${calendar.summary} with ${name}`,
        onchange: (event) => put({ read: (event.target as HTMLInputElement).checked, write: false }),
      });
      const writeBox = h('input', {
        type: 'checkbox',
        checked: write,
        disabled: !writable(calendar),
        'aria-label': `Write ${calendar.summary} with ${name}`,
        onchange: (event) => {
          const on = (event.target as HTMLInputElement).checked;
          put({ read: on || read, write: on });
        },
      });
      return h(
        'td',
        key.kind === 'app' ? { class: 'app' } : {},
        h('label', { class: 'toggle' }, readBox, ' Read'),
        h('label', { class: 'toggle' }, writeBox, ' Write'),
      );
    });
  }

  /** Grant every calendar of a key, or every key on a calendar, at once, after a confirmation. */
  function bulk(
    target: { keyId: string } | { calendarId: string },
    subject: string,
    access: 'write' | 'read' | 'none',
    text: string,
    count: number,
  ): HTMLElement {
    const ask =
      'keyId' in target ? keyQuestion(subject, access, count) : calendarQuestion(subject, access, count);
    return h(
      'button',
      {
        type: 'button',
        class: 'secondary small',
        'aria-label': `${text} for ${subject}`,
        onclick: () =>
          void (async () => {
            if (await confirmDialog(ask)) {
              await change(() => api('POST', '/grants/bulk', { ...target, access }), `${subject}: ${text}.`);
            }
          })(),
      },
      text,
    );
  }

  async function load(): Promise<void> {
    const matrix = await api<Matrix>('GET', '/matrix');
    if (matrix.keys.length === 0 || matrix.accounts.length === 0) {
      body.replaceChildren(
        h(
          'p',
          {},
          'You need at least one ',
          h('a', { href: '/keys' }, 'API key'),
          ' and one ',
          h('a', { href: '/accounts' }, 'account'),
          '.',
        ),
      );
      return;
    }
    const calendarCount = matrix.accounts.reduce((sum, account) => sum + account.calendars.length, 0);
    const keyCount = matrix.keys.filter((key) => key.kind !== 'app').length;
    const head = h(
      'tr',
      {},
      h('th', { scope: 'col' }, 'Calendar'),
      h('th', { scope: 'col' }, 'Enabled'),
      matrix.keys.map((key) =>
        h(
          'th',
          { scope: 'col', ...(key.kind === 'app' ? { class: 'app' } : {}) },
          h(
            'div',
            {},
            key.name,
            key.kind === 'app' ? [' ', h('span', { class: 'badge app' }, 'connected app')] : null,
          ),
          h(
            'div',
            { class: 'row' },
            bulk({ keyId: key.id }, subject(key), 'write', 'All', calendarCount),
            bulk({ keyId: key.id }, subject(key), 'read', 'Read all', calendarCount),
            bulk({ keyId: key.id }, subject(key), 'none', 'None', calendarCount),
          ),
        ),
      ),
    );
    const groups = matrix.accounts.map(({ connection, calendars }) =>
      h(
        'tbody',
        {},
        h(
          'tr',
          {},
          h(
            'th',
            { scope: 'rowgroup', colspan: String(matrix.keys.length + 2), class: 'group' },
            accountName(connection),
          ),
        ),
        calendars.map((calendar) =>
          h(
            'tr',
            {},
            h(
              'th',
              { scope: 'row' },
              h('div', {}, calendar.summary),
              h(
                'div',
                { class: 'row' },
                bulk({ calendarId: calendar.id }, calendar.summary, 'write', 'All keys', keyCount),
                bulk({ calendarId: calendar.id }, calendar.summary, 'none', 'No key', keyCount),
              ),
              feedControl(calendar),
            ),
            h(
              'td',
              {},
              h('input', {
                type: 'checkbox',
                checked: calendar.enabled,
                'aria-label': `${calendar.summary} enabled for every key`,
                onchange: (event) => {
                  const enabled = (event.target as HTMLInputElement).checked;
                  void change(
                    () => api('PATCH', `/calendars/${calendar.id}`, { enabled }),
                    `${calendar.summary} ${enabled ? 'enabled' : 'disabled'}.`,
                  );
                },
              }),
            ),
            cells(matrix, calendar),
          ),
        ),
      ),
    );
    body.replaceChildren(
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { class: 'matrix' },
          h('caption', {}, 'Read / Write per key and connected app'),
          h('thead', {}, head),
          groups,
        ),
      ),
    );
  }
  await load();
}
