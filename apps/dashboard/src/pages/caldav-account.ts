import { api } from '../api.ts';
import { h, notice } from '../dom.ts';

/** Where the common CalDAV services live and what password they want. */
const PRESETS: Record<string, { url: string; hint: string; link?: string }> = {
  icloud: {
    url: 'https://caldav.icloud.com',
    hint: 'iCloud needs an app-specific password, not your Apple Account password.',
    link: 'https://support.apple.com/en-us/102654',
  },
  fastmail: {
    url: 'https://caldav.fastmail.com',
    hint: 'Fastmail needs an app password (Settings → Privacy & Security → App passwords).',
  },
  nextcloud: {
    url: 'https://',
    hint: "Your Nextcloud's address; an app password from Settings → Security is best.",
  },
  other: { url: 'https://', hint: "The server's CalDAV address, a principal or one calendar's URL." },
};

/** A connected CalDAV account, as GET /connections lists it: its calendars' URLs name its server. */
export interface CaldavAccount {
  accountEmail: string | null;
  calendars: { externalId?: string }[];
}

/** The preset whose server an account's calendars are on (iCloud answers from partition hosts). */
function presetOf(origin: string): string {
  const host = new URL(origin).hostname;
  return host === 'icloud.com' || host.endsWith('.icloud.com')
    ? 'icloud'
    : host === 'fastmail.com' || host.endsWith('.fastmail.com')
      ? 'fastmail'
      : 'other';
}

/**
 * The username an account signs in with: its identity, less the `@host` Calgate adds to a bare
 * username (`alice@dav.example.com` on dav.example.com is `alice`); an address the server gave
 * is kept whole.
 */
function usernameOf(accountEmail: string | null, origin: string | undefined): string {
  const identity = accountEmail ?? '';
  const server = origin === undefined ? undefined : `@${new URL(origin).host}`;
  return server !== undefined && identity.length > server.length && identity.endsWith(server)
    ? identity.slice(0, -server.length)
    : identity;
}

/**
 * "Connect a CalDAV account": presets for iCloud, Fastmail and Nextcloud, or any server.
 * `reconnect` fills the form for an account whose server refuses its stored password: its server
 * and username, so that only the new password is asked for (connecting the same account again
 * keeps its calendars and grants).
 */
export function caldavSection(onAdded: () => Promise<void>): {
  section: HTMLElement;
  reconnect(account: CaldavAccount): void;
} {
  const status = h('div', { 'aria-live': 'polite' });
  const preset = h(
    'select',
    { id: 'caldav-preset', name: 'preset' },
    h('option', { value: 'icloud' }, 'iCloud'),
    h('option', { value: 'fastmail' }, 'Fastmail'),
    h('option', { value: 'nextcloud' }, 'Nextcloud'),
    h('option', { value: 'other' }, 'Any CalDAV server'),
  );
  const url = h('input', { id: 'caldav-url', name: 'url', required: true, type: 'url' });
  const username = h('input', {
    id: 'caldav-username',
    name: 'username',
    required: true,
    autocomplete: 'username',
  });
  const password = h('input', {
    id: 'caldav-password',
    name: 'password',
    required: true,
    type: 'password',
    autocomplete: 'current-password',
  });
  const hint = h('p', { class: 'muted', id: 'caldav-hint' });
  const access = h(
    'select',
    { id: 'caldav-access', name: 'access' },
    h('option', { value: 'read' }, 'Read only'),
    h('option', { value: 'write' }, 'Read and write'),
    h('option', { value: 'none' }, 'No access yet'),
  );
  const choose = () => {
    const chosen = PRESETS[preset.value] ?? PRESETS.other;
    url.value = chosen?.url ?? 'https://';
    hint.replaceChildren(
      chosen?.hint ?? '',
      ...(chosen?.link
        ? [' ', h('a', { href: chosen.link, target: '_blank', rel: 'noopener' }, 'How to make one')]
        : []),
    );
  };
  preset.addEventListener('change', choose);
  choose();
  const form = h(
    'form',
    {},
    h('label', { for: 'caldav-preset' }, 'Service'),
    preset,
    h('label', { for: 'caldav-url' }, 'Server address'),
    url,
    h('label', { for: 'caldav-username' }, 'Username'),
    username,
    h('label', { for: 'caldav-password' }, 'Password'),
    password,
    hint,
    h('label', { for: 'caldav-access' }, 'Give every existing API key'),
    access,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Connect CalDAV account')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      try {
        const result = await api<{
          accountEmail: string;
          reconnected: boolean;
          calendars: { summary: string }[];
        }>('POST', '/connections/caldav', {
          url: url.value.trim(),
          username: username.value.trim(),
          password: password.value,
          access: access.value,
        });
        status.replaceChildren(
          notice(
            `${result.reconnected ? 'Reconnected' : 'Connected'} ${result.accountEmail}: ${result.calendars.map((c) => c.summary).join(', ')}.`,
          ),
        );
        form.reset();
        choose();
        await onAdded();
      } catch (error) {
        password.value = '';
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      }
    })();
  });
  const section = h(
    'section',
    { class: 'card', 'aria-labelledby': 'caldav-title' },
    h('h2', { id: 'caldav-title' }, 'Connect a CalDAV account'),
    h('p', {}, 'iCloud, Fastmail, Nextcloud or any CalDAV server. The password is stored sealed.'),
    form,
    status,
  );
  const reconnect = (account: CaldavAccount) => {
    const calendarUrl = account.calendars.find((calendar) => calendar.externalId)?.externalId;
    const origin = calendarUrl === undefined ? undefined : new URL(calendarUrl).origin;
    preset.value = origin === undefined ? 'other' : presetOf(origin);
    choose();
    if (preset.value === 'other' && origin !== undefined) {
      // Discovery finds the account's calendars again from its server's root.
      url.value = `${origin}/`;
    }
    username.value = usernameOf(account.accountEmail, origin);
    password.value = '';
    // Calendars the account already has keep their grants; new ones wait for the matrix.
    access.value = 'none';
    status.replaceChildren();
    section.scrollIntoView({ block: 'center' });
    password.focus();
  };
  return { section, reconnect };
}
