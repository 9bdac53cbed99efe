import { api } from '../api.ts';
import { copyButton, h, notice } from '../dom.ts';
import { type CreatedKey, keyCreateForm } from './key-create.ts';
import { workspaceSection } from './workspace.ts';

interface Overview {
  mcpUrl: string;
  /** Each client's configuration as text: the blocks `npm start` prints on a first run. */
  clients: { client: string; label: string; text: string }[];
  keyPlaceholder: string;
  calendars: { id: string; summary: string }[];
  liveKeys: number;
  accounts: {
    id: string;
    accountEmail: string | null;
    provider: string;
    status: string;
    statusDetail?: string | null;
  }[];
}

/** How an account is called on screen; local calendars are kept by Calgate itself. */
export function accountName(account: { id: string; provider: string; accountEmail: string | null }): string {
  return account.accountEmail ?? (account.provider === 'local' ? 'Calgate calendars' : account.id);
}

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge ${status}` }, status.replace('_', ' '));
}

/** Who issued an account's token, as the person knows them. */
export function providerName(provider: string): string {
  return provider === 'microsoft'
    ? 'Microsoft'
    : provider === 'google'
      ? 'Google'
      : provider === 'ics'
        ? 'Calendar feed'
        : provider === 'caldav'
          ? 'CalDAV'
          : provider;
}

/**
 * Where an account that needs reconnecting is reconnected: its own provider's consent, or for a
 * CalDAV account the Accounts page's form filled for it (a new password is all it needs).
 */
export function reconnectUrl(account: { id: string; provider: string }): string {
  return account.provider === 'microsoft'
    ? `/oauth/microsoft/start?reconnect=${encodeURIComponent(account.id)}`
    : account.provider === 'caldav'
      ? `/accounts?reconnect=${encodeURIComponent(account.id)}`
      : '/oauth/google/start?access=none';
}

/**
 * A banner naming the accounts their provider (Google, Microsoft, a CalDAV server) no longer accepts, each with its reconnect link; null when
 * every account is fine.
 */
export function reauthBanner(
  accounts: readonly { id: string; provider: string; accountEmail: string | null; status: string }[],
): HTMLElement | null {
  const broken = accounts.filter((account) => account.status === 'needs_reauth');
  if (broken.length === 0) {
    return null;
  }
  const providers = [...new Set(broken.map((account) => providerName(account.provider)))];
  const who =
    providers.length !== 1
      ? 'their providers'
      : providers[0] === 'CalDAV'
        ? 'the CalDAV server'
        : providers[0];
  // A CalDAV account signs in with a password, the others with a token.
  const passwords = broken.filter((account) => account.provider === 'caldav').length;
  const secret = passwords === 0 ? 'token' : passwords === broken.length ? 'password' : 'token or password';
  return h(
    'section',
    { class: 'card notice error reauth-banner', role: 'alert' },
    h(
      'p',
      {},
      broken.length === 1
        ? `An account needs reconnecting: ${who} no longer accepts its ${secret}, so its calendars cannot be reached.`
        : `${broken.length} accounts need reconnecting: ${who} no longer ${providers.length === 1 ? 'accepts' : 'accept'} their ${secret.replace(/(token|password)/g, '$1s')}, so their calendars cannot be reached.`,
    ),
    h(
      'ul',
      { class: 'plain' },
      broken.map((account) =>
        h(
          'li',
          {},
          h('a', { href: reconnectUrl(account), class: 'button' }, `Reconnect ${accountName(account)}`),
        ),
      ),
    ),
  );
}

/** Each client's configuration as text, with `secret` in place of the placeholder when given. */
function configCards(overview: Overview, secret?: string): HTMLElement[] {
  return overview.clients.map(({ label, text: raw }) => {
    const text = secret === undefined ? raw : raw.replaceAll(overview.keyPlaceholder, secret);
    return h(
      'section',
      { class: 'card config' },
      h(
        'div',
        { class: 'row spread' },
        h('h3', {}, label),
        copyButton(text, `Copy the ${label} configuration`),
      ),
      // Wrapped, never cut off: every character of the configuration is on screen.
      h('pre', { tabindex: '0', 'aria-label': `${label} configuration` }, text),
    );
  });
}

interface TestCall {
  ok: boolean;
  latencyMs: number;
  calendars: { id: string; summary: string; canRead: boolean; canWrite: boolean }[];
  message?: string;
}

/** Step 4: list_calendars as the new key, and what it saw. */
function testCallStep(created: CreatedKey): HTMLElement {
  const result = h('div', { 'aria-live': 'polite' });
  const button = h('button', { type: 'button' }, 'Send a test call');
  button.addEventListener('click', () => {
    button.disabled = true;
    void (async () => {
      try {
        const call = await api<TestCall>('POST', `/keys/${created.key.id}/test-call`);
        const seen = call.calendars.map(
          (calendar) =>
            `${calendar.summary} (${calendar.canWrite ? 'Read, Write' : calendar.canRead ? 'Read' : 'disabled'})`,
        );
        result.replaceChildren(
          notice(
            call.ok
              ? `list_calendars answered in ${call.latencyMs} ms. ${created.key.name} sees ${seen.length === 0 ? 'no calendar' : seen.join(', ')}.${call.message === undefined ? '' : ` ${call.message}`}`
              : `The test call failed: ${call.message ?? 'no details'}`,
            call.ok ? 'info' : 'error',
          ),
        );
      } catch (error) {
        result.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      } finally {
        button.disabled = false;
      }
    })();
  });
  return h(
    'li',
    {},
    h('h3', {}, 'Send a test call'),
    h('p', {}, `Calls list_calendars as ${created.key.name}, as an agent would, and shows what it sees.`),
    button,
    result,
  );
}

/**
 * The checklist of a new workspace: connect a calendar, create a key with its calendars, copy a
 * client configuration with the secret filled in (shown once), send a test call.
 */
async function onboarding(overview: Overview): Promise<HTMLElement> {
  const hasCalendar = overview.calendars.length > 0;
  // Steps 3 and 4 appear once the key exists (its secret is only known then).
  const after = h('ol', { class: 'checklist', start: '3' });
  const steps = h(
    'ol',
    { class: 'checklist' },
    h(
      'li',
      { 'data-done': String(hasCalendar) },
      h('h3', {}, hasCalendar ? 'Connect a calendar ✓' : 'Connect a calendar'),
      hasCalendar
        ? h(
            'p',
            {},
            `${overview.calendars.length} calendar${overview.calendars.length === 1 ? '' : 's'} ready.`,
          )
        : h(
            'p',
            {},
            h('a', { href: '/accounts' }, 'Connect a Google or Microsoft account'),
            ' or add a calendar.',
          ),
    ),
    h(
      'li',
      {},
      await keyCreateForm({
        title: 'Create a key with its calendars',
        onCreated: (created) => {
          after.replaceChildren(
            h(
              'li',
              {},
              h('h3', {}, `Configure your client with ${created.key.name}`),
              h(
                'p',
                { role: 'status' },
                'The secret is filled in below. Copy it now: Calgate keeps only its hash and cannot show it again.',
              ),
              h(
                'div',
                { class: 'row' },
                h('code', { id: 'secret' }, created.secret),
                copyButton(created.secret, 'Copy the secret'),
              ),
              h('div', { class: 'grid configs' }, configCards(overview, created.secret)),
            ),
            testCallStep(created),
          );
        },
      }),
    ),
  );
  return h(
    'section',
    { class: 'card onboarding', 'aria-labelledby': 'onboarding-title' },
    h('h2', { id: 'onboarding-title' }, 'Get started'),
    steps,
    after,
  );
}

/** The MCP URL, copy-ready client configurations and the state of each account. */
export async function renderOverview(root: HTMLElement): Promise<void> {
  const overview = await api<Overview>('GET', '/overview');
  const configs = configCards(overview);
  const banner = reauthBanner(overview.accounts);
  root.append(
    ...(banner === null ? [] : [banner]),
    ...(overview.liveKeys === 0 ? [await onboarding(overview)] : []),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'MCP endpoint'),
      h(
        'div',
        { class: 'row' },
        h('code', { id: 'mcp-url' }, overview.mcpUrl),
        copyButton(overview.mcpUrl, 'Copy the MCP URL'),
      ),
      h(
        'p',
        {},
        'Create a key under ',
        h('a', { href: '/keys' }, 'API keys'),
        ' and put it where the configurations say <YOUR_API_KEY>.',
      ),
    ),
    await workspaceSection(),
    h('h2', {}, 'Client configurations'),
    h('div', { class: 'grid configs' }, configs),
    h('h2', {}, 'Accounts'),
    overview.accounts.length === 0
      ? h(
          'p',
          {},
          'No accounts yet. ',
          h('a', { href: '/accounts' }, 'Connect a Google or Microsoft account'),
          '.',
        )
      : h(
          'ul',
          { class: 'plain' },
          overview.accounts.map((account) =>
            h('li', {}, `${accountName(account)} `, statusBadge(account.status)),
          ),
        ),
  );
}
