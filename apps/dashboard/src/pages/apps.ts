import { api } from '../api.ts';
import { confirmDialog, h, notice, when } from '../dom.ts';
import { HIJACK_POLICY_CHOICES } from './key-defaults.ts';

interface ConnectedApp {
  id: string;
  name: string;
  clientId: string;
  clientName: string;
  userEmail: string | null;
  toolsets: string[];
  /** What risky actions need after the app's agent was shown suspicious content. */
  hijackPolicy: string;
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

  async function savePolicy(app: ConnectedApp, value: string): Promise<void> {
    let result: HTMLElement;
    try {
      const { app: saved } = await api<{ app: ConnectedApp }>('PATCH', `/connected-apps/${app.id}`, {
        hijackPolicy: value,
      });
      result = notice(`Saved ${app.clientName}: after suspicious content ${saved.hijackPolicy}.`);
    } catch (error) {
      result = notice(error instanceof Error ? error.message : String(error), 'error');
    }
    await load();
    status.replaceChildren(result);
  }

  /** The app's hijack policy: a select and its Save button while it is live, else the word. */
  function policyCell(app: ConnectedApp): HTMLElement {
    const label =
      HIJACK_POLICY_CHOICES.find(([value]) => value === app.hijackPolicy)?.[1] ?? app.hijackPolicy;
    if (app.revokedAt !== null) {
      return h('td', {}, label);
    }
    const select = h(
      'select',
      { 'aria-label': `After suspicious content for ${app.clientName}` },
      HIJACK_POLICY_CHOICES.map(([value, text]) =>
        h('option', { value, selected: value === app.hijackPolicy }, text),
      ),
    );
    const save = h('button', { type: 'button', class: 'secondary' }, `Save ${app.clientName}`);
    save.addEventListener('click', () => {
      if (select.value === app.hijackPolicy) {
        status.replaceChildren(notice(`Nothing to save for ${app.clientName}.`));
        return;
      }
      void savePolicy(app, select.value);
    });
    return h('td', {}, h('div', { class: 'row' }, select, save));
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
      policyCell(app),
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
                'After suspicious content',
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
    h(
      'p',
      {},
      'After suspicious content: once an app’s agent has read calendar text Calgate withheld, or an invitation from outside your organisation, deleting events, batch changes, inviting outsiders and schedules to named targets need your confirmation. Ask: the app shows you a form when it can, else you confirm under “Waiting for confirmation” on ',
      h('a', { href: '/keys' }, 'API keys'),
      '. Strict: always there. Off: no check.',
    ),
    status,
    table,
  );
  await load();
}
