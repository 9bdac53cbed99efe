import { api } from '../api.ts';
import { copyButton, h, notice, when } from '../dom.ts';
import { renderKeyDefaults } from './key-defaults.ts';

interface Key {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  defaultCalendarId: string | null;
  timeZone: string | null;
  toolsets: string[];
}

function secretPanel(title: string, secret: string): HTMLElement {
  return h(
    'section',
    { class: 'card secret', role: 'status', 'aria-label': title },
    h('h2', {}, title),
    h('p', {}, 'Copy the secret now: Calgate keeps only its hash and cannot show it again.'),
    h('div', { class: 'row' }, h('code', { id: 'secret' }, secret), copyButton(secret, 'Copy the secret')),
  );
}

/** API keys: create (secret shown once), list, rotate, revoke, default calendar, time zone, toolsets. */
export async function renderKeys(root: HTMLElement): Promise<void> {
  const shown = h('div', {});
  const table = h('div', {});
  const settingsStatus = h('div', { 'aria-live': 'polite' });
  const settings = h('div', {});
  const name = h('input', { id: 'key-name', name: 'name', required: true, maxlength: '100' });
  const expires = h('input', { id: 'key-expires', name: 'expires', type: 'date' });

  async function act(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      shown.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
    }
    await load();
  }
  function row(key: Key): HTMLElement {
    const live = key.revokedAt === null;
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, key.name),
      h('td', {}, h('code', {}, `${key.prefix}…`)),
      h('td', {}, when(key.createdAt)),
      h('td', {}, when(key.lastUsedAt)),
      h('td', {}, when(key.expiresAt)),
      h('td', {}, live ? 'active' : `revoked ${when(key.revokedAt)}`),
      h(
        'td',
        { class: 'actions' },
        live
          ? [
              h(
                'button',
                {
                  type: 'button',
                  class: 'secondary',
                  onclick: () =>
                    void act(async () => {
                      const answer = await api<{ secret: string }>('POST', `/keys/${key.id}/rotate`);
                      shown.replaceChildren(secretPanel(`New secret for ${key.name}`, answer.secret));
                    }),
                },
                `Rotate ${key.name}`,
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  onclick: () =>
                    void act(async () => {
                      await api('POST', `/keys/${key.id}/revoke`);
                      shown.replaceChildren(notice(`Revoked ${key.name}.`));
                    }),
                },
                `Revoke ${key.name}`,
              ),
            ]
          : null,
      ),
    );
  }
  async function load(): Promise<void> {
    const { keys, toolsets } = await api<{ keys: Key[]; toolsets: string[] }>('GET', '/keys');
    settings.replaceChildren(
      await renderKeyDefaults(
        keys.filter((key) => key.revokedAt === null),
        toolsets,
        settingsStatus,
        load,
      ),
    );
    table.replaceChildren(
      keys.length === 0
        ? h('p', {}, 'No keys yet.')
        : h(
            'div',
            { class: 'scroll' },
            h(
              'table',
              {},
              h('caption', {}, 'Your API keys'),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Name', 'Prefix', 'Created', 'Last used', 'Expires', 'State', 'Actions'].map((t) =>
                    h('th', { scope: 'col' }, t),
                  ),
                ),
              ),
              h('tbody', {}, keys.map(row)),
            ),
          ),
    );
  }
  const form = h(
    'form',
    { class: 'card' },
    h('h2', {}, 'Create a key'),
    h('label', { for: 'key-name' }, 'Name'),
    name,
    h('label', { for: 'key-expires' }, 'Expires (optional)'),
    expires,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Create key')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(async () => {
      const body = {
        name: name.value,
        ...(expires.value === '' ? {} : { expiresAt: new Date(`${expires.value}T23:59:59Z`).toISOString() }),
      };
      const answer = await api<{ secret: string; key: Key }>('POST', '/keys', body);
      shown.replaceChildren(secretPanel(`Secret for ${answer.key.name}`, answer.secret));
      form.reset();
    });
  });
  root.append(form, shown, table, settings);
  await load();
}
