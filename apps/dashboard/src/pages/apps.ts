import { api } from '../api.ts';
import { confirmDialog, h, notice, when } from '../dom.ts';

interface ConnectedApp {
  id: string;
  name: string;
  clientId: string;
  clientName: string;
  userEmail: string | null;
  toolsets: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  calendars: { calendarId: string; summary: string; read: boolean; write: boolean }[];
}

/** A client id that is a URL (a metadata document) is shown by its host; a registered one as is. */
function clientHost(clientId: string): string {
  try {
    return new URL(clientId).host || clientId;
  } catch {
    return clientId;
  }
}

function calendarSummary(app: ConnectedApp): string {
  if (app.calendars.length === 0) {
    return 'No calendars';
  }
  return app.calendars
    .map((calendar) => `${calendar.summary} (${calendar.write ? 'Read, Write' : 'Read'})`)
    .join(', ');
}

/** Asks before revoking, in the shared confirm dialog named after the app. */
function confirmRevoke(app: ConnectedApp): Promise<boolean> {
  return confirmDialog({
    question: `Revoke ${app.clientName}?`,
    detail: 'It loses access to your calendars within a few seconds.',
    confirm: 'Revoke',
    danger: true,
  });
}

/** Connected apps: MCP clients a person approved through OAuth, their calendars, and revoking them. */
export async function renderApps(root: HTMLElement): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const table = h('div', {});
  const { mcpUrl } = await api<{ mcpUrl: string }>('GET', '/overview');

  async function revoke(app: ConnectedApp, button: HTMLButtonElement): Promise<void> {
    if (!(await confirmRevoke(app))) {
      button.focus();
      return;
    }
    let result: HTMLElement;
    try {
      await api('POST', `/connected-apps/${app.id}/revoke`);
      result = notice(`Revoked ${app.clientName}.`);
    } catch (error) {
      result = notice(error instanceof Error ? error.message : String(error), 'error');
    }
    await load();
    status.replaceChildren(result);
  }

  function row(app: ConnectedApp): HTMLElement {
    const live = app.revokedAt === null;
    const button = h('button', { type: 'button', class: 'danger' }, `Revoke ${app.clientName}`);
    button.addEventListener('click', () => void revoke(app, button));
    return h(
      'tr',
      {},
      h(
        'th',
        { scope: 'row' },
        app.clientName,
        app.name === app.clientName ? null : h('div', { class: 'muted' }, app.name),
      ),
      h('td', {}, h('code', { title: app.clientId }, clientHost(app.clientId))),
      h('td', {}, app.userEmail ?? '—'),
      h('td', {}, calendarSummary(app)),
      h('td', {}, app.toolsets.length === 0 ? '—' : app.toolsets.join(', ')),
      h('td', {}, when(app.createdAt)),
      h('td', {}, when(app.lastUsedAt)),
      h(
        'td',
        {},
        live
          ? h('span', { class: 'badge active' }, 'active')
          : h('span', { class: 'badge revoked' }, `revoked ${when(app.revokedAt)}`),
      ),
      h('td', { class: 'actions' }, live ? button : null),
    );
  }

  async function load(): Promise<void> {
    const { apps } = await api<{ apps: ConnectedApp[] }>('GET', '/connected-apps');
    if (apps.length === 0) {
      table.replaceChildren(
        h(
          'p',
          { class: 'card' },
          'No apps are connected yet. An MCP client such as Claude.ai or ChatGPT connects by adding ',
          'Calgate’s MCP URL ',
          h('code', {}, mcpUrl),
          ' as a connector; you then sign in here and choose which calendars it may read or write. ',
          'Approved apps appear on this page, where you can revoke them.',
        ),
      );
      return;
    }
    table.replaceChildren(
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          {},
          h('caption', {}, 'Apps connected through OAuth'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              [
                'App',
                'Client',
                'Approved by',
                'Calendars',
                'Toolsets',
                'Created',
                'Last used',
                'Status',
                'Actions',
              ].map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          h('tbody', {}, apps.map(row)),
        ),
      ),
    );
  }

  root.append(
    h(
      'p',
      {},
      'MCP clients you approved with OAuth. Each has its own calendars (edit them under ',
      h('a', { href: '/matrix' }, 'Permissions'),
      ') and appears in the ',
      h('a', { href: '/audit' }, 'Audit log'),
      '.',
    ),
    status,
    table,
  );
  await load();
}
