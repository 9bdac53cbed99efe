import { api } from '../api.ts';
import { confirmDialog, h, notice } from '../dom.ts';
import { caldavSection } from './caldav-account.ts';
import { icsSection } from './ics-subscription.ts';
import { accountName, providerName, reauthBanner, reconnectUrl, statusBadge } from './overview.ts';
import { serviceAccountSection } from './service-account.ts';

interface Connection {
  id: string;
  provider: string;
  accountEmail: string | null;
  status: string;
  statusDetail?: string | null;
  /** False for a Google account Calgate may only read (its consent granted no write scope). */
  writable?: boolean;
  scopes?: string[];
  calendars: {
    id: string;
    summary: string;
    /** The calendar's id at its provider (a CalDAV calendar's URL). */
    externalId?: string;
    accessRole: string;
    enabled: boolean;
    primary: boolean;
    /** The mirror's last sync (a feed's last refresh) and, when it failed, why. */
    syncedAt?: string | null;
    syncError?: string | null;
  }[];
}

interface GoogleStatus {
  configured: boolean;
  reason?: string;
  fix?: string;
}

interface MicrosoftStatus {
  configured: boolean;
  reason?: string;
  fix?: string;
}

/** Reconnecting asks Google for the same level the account has now. */
function startUrl(access: string, google: 'read' | 'write'): string {
  return `/oauth/google/start?access=${encodeURIComponent(access)}&google=${google}`;
}

/** "Allow writing": incremental consent for the write scopes of one connected account. */
function upgradeUrl(connection: Connection): string {
  return `/oauth/google/start?upgrade=${encodeURIComponent(connection.id)}`;
}

function connectForm(google: GoogleStatus): HTMLElement {
  const scopes = h(
    'select',
    { id: 'google-access', name: 'google', disabled: !google.configured },
    h('option', { value: 'read' }, 'Read only (Google asks only to see calendars)'),
    h('option', { value: 'write' }, 'Read and write'),
  );
  const access = h(
    'select',
    { id: 'access', name: 'access', disabled: !google.configured },
    h('option', { value: 'write' }, 'Read and write (where Calgate and the account may write)'),
    h('option', { value: 'read' }, 'Read only'),
    h('option', { value: 'none' }, 'No access yet (set it in Permissions)'),
  );
  const explanation = google.configured
    ? h(
        'p',
        { class: 'muted' },
        'Read only is enough to list events and find free time; you can allow writing later without reconnecting.',
      )
    : h(
        'div',
        { class: 'notice error', id: 'google-not-configured', role: 'note' },
        h('p', {}, google.reason ?? 'Google is not configured on this Calgate.'),
        h('p', {}, google.fix ?? 'Set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET and restart Calgate.'),
      );
  // A plain GET form: the browser itself goes to Google's consent page and back.
  return h(
    'form',
    { class: 'card', method: 'get', action: '/oauth/google/start' },
    h('h2', {}, 'Connect a Google account'),
    h('label', { for: 'google-access' }, 'Calgate may'),
    scopes,
    h('label', { for: 'access' }, 'Give every existing API key'),
    access,
    explanation,
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          type: 'submit',
          disabled: !google.configured,
          ...(google.configured ? {} : { 'aria-describedby': 'google-not-configured' }),
        },
        'Connect Google',
      ),
    ),
  );
}

/**
 * "Connect Microsoft": a plain GET form, so the browser itself goes to Microsoft's sign-in and
 * back. Off (and visibly disabled, with what to set) without an app registration.
 */
function microsoftForm(microsoft: MicrosoftStatus): HTMLElement {
  const off = !microsoft.configured;
  const scopes = h(
    'select',
    { id: 'microsoft-access', name: 'microsoft', disabled: off },
    h('option', { value: 'read' }, 'Read only (Calendars.Read)'),
    h('option', { value: 'write' }, 'Read and write (Calendars.ReadWrite)'),
  );
  const access = h(
    'select',
    { id: 'microsoft-grants', name: 'access', disabled: off },
    h('option', { value: 'write' }, 'Read and write (where Calgate and the account may write)'),
    h('option', { value: 'read' }, 'Read only'),
    h('option', { value: 'none' }, 'No access yet (set it in Permissions)'),
  );
  const account = h('input', {
    id: 'microsoft-account',
    name: 'account',
    type: 'email',
    autocomplete: 'email',
    placeholder: 'ann@contoso.com',
    disabled: off,
  });
  const explanation = off
    ? h(
        'div',
        { class: 'notice error', id: 'microsoft-not-configured', role: 'note' },
        h('p', {}, microsoft.reason ?? 'Microsoft is not configured on this Calgate.'),
        h(
          'p',
          {},
          microsoft.fix ?? 'Set MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET and restart Calgate.',
        ),
      )
    : h(
        'p',
        { class: 'muted' },
        'Microsoft 365 (work or school) and Outlook.com accounts. Calgate also asks to read your profile (User.Read) and to stay connected (offline_access).',
      );
  return h(
    'form',
    { class: 'card', method: 'get', action: '/oauth/microsoft/start' },
    h('h2', {}, 'Connect a Microsoft 365 or Outlook account'),
    h('label', { for: 'microsoft-access' }, 'Microsoft permission'),
    scopes,
    h('label', { for: 'microsoft-grants' }, 'Existing API keys get'),
    access,
    h('label', { for: 'microsoft-account' }, 'Account to sign in as (optional)'),
    account,
    explanation,
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        {
          type: 'submit',
          disabled: off,
          ...(off ? { 'aria-describedby': 'microsoft-not-configured' } : {}),
        },
        'Connect Microsoft',
      ),
    ),
  );
}

/** The read-only badge and "Allow writing" of an account Calgate may only read. */
function readOnlyNotice(connection: Connection, name: string): HTMLElement | null {
  if (
    (connection.provider !== 'google' && connection.provider !== 'microsoft') ||
    connection.writable !== false
  ) {
    return null;
  }
  // Microsoft has no incremental consent for a narrower grant: writing is a reconnect asking Calendars.ReadWrite.
  const href =
    connection.provider === 'microsoft'
      ? `${reconnectUrl(connection)}&microsoft=write`
      : upgradeUrl(connection);
  return h(
    'p',
    { class: 'notice warning' },
    'Calgate has read-only access to this account: no key can write to its calendars. ',
    h('a', { href, class: 'button' }, `Allow writing for ${name}`),
  );
}

/**
 * Asks before disconnecting, naming what goes with the account: its calendars and every grant
 * on them (counted from the matrix, keys and connected apps alike).
 */
async function confirmDisconnect(connection: Connection): Promise<boolean> {
  const { grants } = await api<{ grants: { keyId: string; calendarId: string }[] }>('GET', '/matrix');
  const own = new Set(connection.calendars.map((calendar) => calendar.id));
  const granted = grants.filter((grant) => own.has(grant.calendarId));
  const holders = new Set(granted.map((grant) => grant.keyId)).size;
  const calendars = connection.calendars.length;
  return confirmDialog({
    question: `Disconnect ${accountName(connection)}?`,
    detail: `Its ${calendars} calendar${calendars === 1 ? '' : 's'} and their grants on ${holders} key${holders === 1 ? '' : 's'} are removed; agents can no longer reach them.`,
    confirm: 'Disconnect',
    danger: true,
  });
}

/** Connected accounts with their calendars: connect, reconnect, disconnect. */
export async function renderAccounts(root: HTMLElement): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const list = h('div', {});
  let connections: Connection[] = [];
  async function load(): Promise<void> {
    ({ connections } = await api<{ connections: Connection[] }>('GET', '/connections'));
    // Accounts Google no longer accepts, named at the top of the page.
    root.querySelector('.reauth-banner')?.remove();
    const banner = reauthBanner(connections);
    if (banner !== null) {
      root.prepend(banner);
    }
    list.replaceChildren(
      connections.length === 0
        ? h('p', {}, 'No accounts connected yet.')
        : h('ul', { class: 'plain' }, connections.map(item)),
    );
  }
  async function disconnect(connection: Connection): Promise<void> {
    if (!(await confirmDisconnect(connection))) {
      return;
    }
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
      h(
        'div',
        { class: 'row spread' },
        h(
          'h3',
          {},
          name,
          ' ',
          statusBadge(connection.status),
          connection.writable === false && connection.provider !== 'local'
            ? [' ', h('span', { class: 'badge read-only' }, 'read-only')]
            : null,
        ),
        connection.provider === 'local'
          ? null
          : h('span', { class: 'muted provider' }, providerName(connection.provider)),
      ),
      connection.status === 'needs_reauth' && connection.provider === 'caldav'
        ? h(
            'p',
            { class: 'notice error' },
            'The CalDAV server no longer accepts this account’s password. ',
            h('button', { type: 'button', onclick: () => caldav.reconnect(connection) }, `Reconnect ${name}`),
          )
        : connection.status === 'needs_reauth'
          ? h(
              'p',
              { class: 'notice error' },
              `${providerName(connection.provider)} no longer accepts this account’s token. `,
              h(
                'a',
                {
                  href:
                    connection.provider === 'microsoft'
                      ? reconnectUrl(connection)
                      : startUrl('none', connection.writable === false ? 'read' : 'write'),
                  class: 'button',
                },
                `Reconnect ${name}`,
              ),
            )
          : readOnlyNotice(connection, name),
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
              connection.provider === 'ics' && calendar.syncedAt
                ? ` · refreshed ${new Date(calendar.syncedAt).toLocaleString()}`
                : null,
            ),
            calendar.syncError
              ? h(
                  'p',
                  { class: 'notice error sync-error' },
                  `${connection.provider === 'ics' ? 'Last refresh failed' : 'Last sync failed'}: ${calendar.syncError}`,
                )
              : null,
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
  const caldav = caldavSection(load);
  const [google, microsoft] = await Promise.all([
    api<GoogleStatus>('GET', '/google/status'),
    api<MicrosoftStatus>('GET', '/microsoft/status'),
  ]);
  root.append(
    connectForm(google),
    microsoftForm(microsoft),
    await serviceAccountSection(load),
    caldav.section,
    await icsSection(load),
    status,
    h('h2', {}, 'Connected accounts'),
    list,
  );
  await load();
  // Reconnect links elsewhere (the overview's banner) land here with the account to fill in.
  const reconnecting = new URLSearchParams(location.search).get('reconnect');
  const account = connections.find((c) => c.id === reconnecting && c.provider === 'caldav');
  if (account !== undefined) {
    caldav.reconnect(account);
  }
}
