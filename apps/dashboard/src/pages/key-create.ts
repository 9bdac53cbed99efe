import { api } from '../api.ts';
import { h, notice } from '../dom.ts';
import { zonePicker } from '../zone-picker.ts';
import { accountName } from './overview.ts';
import { workspaceZone } from './workspace.ts';

/** A key as the create answer returns it. */
export interface CreatedKey {
  key: { id: string; name: string; prefix: string };
  secret: string;
}

interface Calendar {
  id: string;
  summary: string;
  accessRole: string;
}
interface Matrix {
  accounts: {
    connection: { id: string; provider: string; accountEmail: string | null };
    calendars: Calendar[];
  }[];
}

/** The toolsets a new key gets unless a person changes them (the server's DEFAULT_TOOLSETS). */
const DEFAULT_TOOLSETS = ['calendar', 'booking', 'search'];

const writable = (calendar: Calendar) => calendar.accessRole === 'owner' || calendar.accessRole === 'writer';

let forms = 0;

/**
 * One form that creates a key with everything it needs at once: name, expiry, toolsets and its
 * calendars with Read or Read and write (POST /keys with grants: all or nothing). `onCreated`
 * gets the answer, whose secret is shown only then.
 */
export async function keyCreateForm(options: {
  title: string;
  onCreated: (created: CreatedKey) => void | Promise<void>;
}): Promise<HTMLFormElement> {
  forms += 1;
  const id = (name: string) => `create-${forms}-${name}`;
  const [matrix, { toolsets }, workspace] = await Promise.all([
    api<Matrix>('GET', '/matrix'),
    api<{ toolsets: string[] }>('GET', '/keys'),
    workspaceZone(),
  ]);
  const status = h('div', { 'aria-live': 'polite' });
  const name = h('input', { id: id('name'), name: 'name', required: true, maxlength: '100' });
  const expires = h('input', { id: id('expires'), name: 'expires', type: 'date' });
  const inherited = workspace === null ? 'its default calendar’s' : `the workspace’s, ${workspace}`;
  const zone = zonePicker({ id: id('zone'), value: null, empty: `Key default: ${inherited}` });
  const toolsetBoxes = toolsets.map((toolset) =>
    h('input', { type: 'checkbox', value: toolset, checked: DEFAULT_TOOLSETS.includes(toolset) }),
  );
  const access = matrix.accounts.flatMap(({ calendars }) =>
    calendars.map((calendar) => ({
      calendar,
      select: h(
        'select',
        { 'aria-label': `Access to ${calendar.summary}`, 'data-calendar': calendar.id },
        h('option', { value: 'none' }, 'No access'),
        h('option', { value: 'read' }, 'Read'),
        h('option', { value: 'write', disabled: !writable(calendar) }, 'Read and write'),
      ),
    })),
  );
  const calendars =
    access.length === 0
      ? h('p', {}, 'No calendars yet: ', h('a', { href: '/accounts' }, 'connect an account'), ' first.')
      : matrix.accounts.map(({ connection, calendars: own }) =>
          h(
            'div',
            { class: 'calendar-group' },
            h('h4', {}, accountName(connection)),
            own.map((calendar) => {
              const select = access.find((item) => item.calendar.id === calendar.id)?.select;
              return h('div', { class: 'row' }, h('span', {}, calendar.summary), select);
            }),
          ),
        );
  const form = h(
    'form',
    { class: 'card key-create' },
    h('h2', {}, options.title),
    h('label', { for: id('name') }, 'Name'),
    name,
    h('label', { for: id('expires') }, 'Expires (optional; none if empty)'),
    expires,
    h('label', { for: id('zone') }, 'Time zone (optional)'),
    zone.element,
    h(
      'fieldset',
      {},
      h('legend', {}, 'Toolsets'),
      toolsetBoxes.map((box) => h('label', { class: 'toggle' }, box, ` ${box.value}`)),
    ),
    h('fieldset', {}, h('legend', {}, 'Calendars'), calendars),
    status,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Create key')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const grants = access
        .filter(({ select }) => select.value !== 'none')
        .map(({ calendar, select }) => ({
          calendarId: calendar.id,
          read: true,
          write: select.value === 'write',
        }));
      const body = {
        name: name.value,
        toolsets: toolsetBoxes.filter((box) => box.checked).map((box) => box.value),
        grants,
        ...(zone.value() === null ? {} : { timeZone: zone.value() }),
        ...(expires.value === '' ? {} : { expiresAt: new Date(`${expires.value}T23:59:59Z`).toISOString() }),
      };
      try {
        const created = await api<CreatedKey>('POST', '/keys', body);
        status.replaceChildren();
        form.reset();
        zone.set(null);
        await options.onCreated(created);
      } catch (error) {
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      }
    })();
  });
  return form;
}
