import { api } from '../api.ts';
import { confirmDialog, copyButton, h, notice, when } from '../dom.ts';
import { renderConfirmations } from './confirmations.ts';
import { keyCreateForm } from './key-create.ts';
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

/** How long the old secret keeps working after a rotation, as offered in the rotate dialog. */
const GRACE_CHOICES: [seconds: number, label: string][] = [
  [0, 'None: the old secret stops at once'],
  [300, '5 minutes'],
  [3600, '1 hour'],
  [86_400, '24 hours'],
];

function secretPanel(title: string, secret: string, note?: string): HTMLElement {
  return h(
    'section',
    { class: 'card secret', role: 'status', 'aria-label': title },
    h('h2', {}, title),
    h('p', {}, note ?? 'Copy the secret now: Calgate keeps only its hash and cannot show it again.'),
    h('div', { class: 'row' }, h('code', { id: 'secret' }, secret), copyButton(secret, 'Copy the secret')),
  );
}

/** API keys: create (secret shown once), list, rotate, revoke, default calendar, time zone, toolsets. */
export async function renderKeys(root: HTMLElement): Promise<void> {
  const shown = h('div', {});
  const table = h('div', {});
  const settingsStatus = h('div', { 'aria-live': 'polite' });
  const settings = h('div', {});

  async function act(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      shown.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
    }
    await load();
  }
  async function rotate(key: Key): Promise<void> {
    const grace = h(
      'select',
      { id: 'rotate-grace' },
      GRACE_CHOICES.map(([seconds, label]) => h('option', { value: String(seconds) }, label)),
    );
    const confirmed = await confirmDialog({
      question: `Rotate key '${key.name}'?`,
      detail:
        'A new secret replaces the current one; the key keeps its calendars and settings. Agents must switch to the new secret before the old one stops working.',
      confirm: 'Rotate key',
      fields: [h('label', { for: 'rotate-grace' }, 'The old secret keeps working for'), grace],
    });
    if (!confirmed) {
      return;
    }
    await act(async () => {
      const answer = await api<{ secret: string; note: string }>('POST', `/keys/${key.id}/rotate`, {
        graceSeconds: Number(grace.value),
      });
      shown.replaceChildren(secretPanel(`New secret for ${key.name}`, answer.secret, answer.note));
    });
  }
  async function revoke(key: Key): Promise<void> {
    const confirmed = await confirmDialog({
      question: `Revoke key '${key.name}'?`,
      detail: 'Agents using it are refused within a few seconds; this cannot be undone.',
      confirm: 'Revoke key',
      danger: true,
    });
    if (!confirmed) {
      return;
    }
    await act(async () => {
      await api('POST', `/keys/${key.id}/revoke`);
      shown.replaceChildren(notice(`Revoked ${key.name}.`));
    });
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
                  onclick: () => void rotate(key),
                },
                `Rotate ${key.name}`,
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  onclick: () => void revoke(key),
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
  const form = await keyCreateForm({
    title: 'Create a key',
    onCreated: async (answer) => {
      shown.replaceChildren(secretPanel(`Secret for ${answer.key.name}`, answer.secret));
      await load();
    },
  });
  root.append(await renderConfirmations(), form, shown, table, settings);
  await load();
}
