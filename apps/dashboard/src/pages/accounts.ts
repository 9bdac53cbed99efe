import { api } from '../api.ts';
import { h, notice } from '../dom.ts';
import { accountName, statusBadge } from './overview.ts';
import { serviceAccountSection } from './service-account.ts';

interface Connection {
  id: string;
  provider: string;
  accountEmail: string | null;
  status: string;
  statusDetail?: string | null;
  calendars: { id: string; summary: string; accessRole: string; enabled: boolean; primary: boolean }[];
}

function startUrl(access: string): string {
  return `/oauth/google/start?access=${encodeURIComponent(access)}`;
}

function connectForm(): HTMLElement {
  const access = h(
    'select',
    { id: 'access', name: 'access' },
    h('option', { value: 'write' }, 'Read and write (where the account may write)'),
    h('option', { value: 'read' }, 'Read only'),
    h('option', { value: 'none' }, 'No access yet (set it in Permissions)'),
  );
  // A plain GET form: the browser itself goes to Google's consent page and back.
  return h(
    'form',
    { class: 'card', method: 'get', action: '/oauth/google/start' },
    h('h2', {}, 'Connect a Google account'),
    h('label', { for: 'access' }, 'Give every existing API key'),
    access,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Connect Google')),
  );
}

/** Connected accounts with their calendars: connect, reconnect, disconnect. */
export async function renderAccounts(root: HTMLElement): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const list = h('div', {});
  async function load(): Promise<void> {
    const { connections } = await api<{ connections: Connection[] }>('GET', '/connections');
    list.replaceChildren(
      connections.length === 0
        ? h('p', {}, 'No accounts connected yet.')
        : h('ul', { class: 'plain' }, connections.map(item)),
    );
  }
  async function disconnect(connection: Connection): Promise<void> {
    try {
      await api('DELETE', `/connections/${connection.id}`);
      status.replaceChildren(notice(`Disconnected ${accountName(connection)}.`));
      await load();
    } catch (error) {
      status.replaceChildren(notice(String(error instanceof Error ? error.message : error), 'error'));
    }
  }
  function item(connection: Connection): HTMLElement {
    const name = accountName(connection);
    return h(
      'li',
      { class: 'card', 'data-account': name },
      h('div', { class: 'row spread' }, h('h3', {}, name, ' ', statusBadge(connection.status))),
      connection.status === 'needs_reauth'
        ? h(
            'p',
            { class: 'notice error' },
            'Google no longer accepts this account’s token. ',
            h('a', { href: startUrl('none'), class: 'button' }, `Reconnect ${name}`),
          )
        : null,
      h(
        'ul',
        { 'aria-label': `Calendars of ${name}` },
        connection.calendars.map((calendar) =>
          h(
            'li',
            {},
            calendar.summary,
            h(
              'span',
              { class: 'muted' },
              ` · ${calendar.accessRole}${calendar.enabled ? '' : ' · disabled'}`,
            ),
          ),
        ),
      ),
      connection.provider === 'local'
        ? null
        : h(
            'button',
            { type: 'button', class: 'danger', onclick: () => void disconnect(connection) },
            `Disconnect ${name}`,
          ),
    );
  }
  root.append(
    connectForm(),
    await serviceAccountSection(load),
    status,
    h('h2', {}, 'Connected accounts'),
    list,
  );
  await load();
}
