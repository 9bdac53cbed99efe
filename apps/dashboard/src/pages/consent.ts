import { api } from '../api.ts';
import { h, notice } from '../dom.ts';
import { HIJACK_POLICY_CHOICES } from './key-defaults.ts';

/** What GET /api/v1/oauth/consent says about a pending authorization request. */
interface ConsentRequest {
  client: {
    clientId: string;
    name: string;
    kind: 'registered' | 'metadata_document';
    redirectHost: string;
  };
  /** The scopes the client asked for, each with its meaning in plain words. */
  scopes: { scope: string; description: string }[];
  allowWrite: boolean;
  calendars: { id: string; summary: string; accountEmail: string; writable: boolean }[];
  toolsets: { name: string; description: string; checked: boolean }[];
  /** The policy of this person's live connection of the app, else the default (ask). */
  hijackPolicy?: string;
}

interface CalendarChoice {
  calendarId: string;
  read: HTMLInputElement;
  write: HTMLInputElement;
}

/** Calendars in the order the server sent them, grouped by account. */
function byAccount(calendars: ConsentRequest['calendars']): Map<string, ConsentRequest['calendars']> {
  const groups = new Map<string, ConsentRequest['calendars']>();
  for (const calendar of calendars) {
    groups.set(calendar.accountEmail, [...(groups.get(calendar.accountEmail) ?? []), calendar]);
  }
  return groups;
}

function asksToWrite(consent: ConsentRequest): boolean {
  return consent.scopes.some(({ scope }) => scope === 'calendars:write');
}

/** Why Write cannot be ticked for a calendar, or null when it can. */
function writeRefusal(consent: ConsentRequest, writable: boolean): string | null {
  if (!asksToWrite(consent)) {
    return `${consent.client.name} asked for read access only.`;
  }
  if (!consent.allowWrite) {
    return 'Members connect apps with Read only; an owner or admin can grant Write.';
  }
  return writable ? null : 'The account can only read this calendar; Calgate cannot write to it.';
}

/** What the client asked for: each scope in plain words (its name beside it), and whether it may write at all. */
function requestedAccess(consent: ConsentRequest): HTMLElement {
  const { name } = consent.client;
  return h(
    'section',
    { 'aria-labelledby': 'consent-asks' },
    h('h2', { id: 'consent-asks' }, `What ${name} asks for`),
    h(
      'ul',
      {},
      consent.scopes.map(({ scope, description }) =>
        h('li', {}, `${description} `, h('span', { class: 'muted' }, '(', h('code', {}, scope), ')')),
      ),
    ),
    h(
      'p',
      {},
      asksToWrite(consent)
        ? `${name} asks to read and to change events; it may change events only on calendars where you tick Write.`
        : `${name} asks for read access only: it cannot change any event.`,
    ),
  );
}

/**
 * The OAuth consent page: an MCP client asks for access, the signed-in person picks calendars
 * (Read ticked, Write not, by default) and toolsets, then allows or denies. Either answer sends
 * the browser back to the client with the URL the server returns.
 */
export async function renderConsent(root: HTMLElement): Promise<void> {
  const request = new URLSearchParams(location.search).get('request');
  if (request === null || request === '') {
    document.title = 'Connect an app · Calgate';
    root.append(
      h('h1', {}, 'Connect an app'),
      notice(
        'This address has no authorization request: start again from the app you want to connect.',
        'error',
      ),
    );
    return;
  }
  let consent: ConsentRequest;
  try {
    consent = await api<ConsentRequest>('GET', `/oauth/consent?${new URLSearchParams({ request })}`);
  } catch (error) {
    document.title = 'Connect an app · Calgate';
    root.append(
      h('h1', {}, 'Connect an app'),
      notice(error instanceof Error ? error.message : String(error), 'error'),
    );
    return;
  }
  const { client } = consent;
  document.title = `Connect ${client.name} · Calgate`;

  const choices: CalendarChoice[] = [];
  const warning = h('p', { class: 'notice warning', role: 'status' });
  const status = h('div', { 'aria-live': 'polite' });
  const allow = h('button', { type: 'submit' }, 'Allow access');
  const deny = h('button', { type: 'button', class: 'secondary' }, 'Deny');

  function updateWarning(): void {
    const none = !choices.some((choice) => choice.read.checked);
    warning.hidden = !none;
    warning.textContent = none
      ? `No calendar is ticked: ${client.name} will be connected but see no calendars.`
      : '';
  }

  function calendarRow(calendar: ConsentRequest['calendars'][number]): HTMLElement {
    const label = `${calendar.summary} (${calendar.accountEmail})`;
    const refusal = writeRefusal(consent, calendar.writable);
    const read = h('input', { type: 'checkbox', checked: true, 'aria-label': `Read ${label}` });
    const write = h('input', {
      type: 'checkbox',
      'aria-label': `Write ${label}`,
      disabled: refusal !== null,
      title: refusal ?? undefined,
    });
    // Write includes Read: ticking Write ticks Read, unticking Read unticks Write.
    read.addEventListener('change', () => {
      if (!read.checked) {
        write.checked = false;
      }
      updateWarning();
    });
    write.addEventListener('change', () => {
      if (write.checked) {
        read.checked = true;
      }
      updateWarning();
    });
    choices.push({ calendarId: calendar.id, read, write });
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, calendar.summary),
      h('td', {}, h('label', { class: 'toggle' }, read, ' Read')),
      h(
        'td',
        {},
        h('label', { class: 'toggle', title: refusal ?? undefined }, write, ' Write'),
        refusal === null ? null : h('span', { class: 'sr' }, refusal),
      ),
    );
  }

  const groups = [...byAccount(consent.calendars)].map(([account, calendars]) =>
    h(
      'tbody',
      {},
      h('tr', {}, h('th', { scope: 'rowgroup', colspan: '3', class: 'group' }, account)),
      calendars.map(calendarRow),
    ),
  );
  const calendarTable =
    consent.calendars.length === 0
      ? h('p', {}, 'No calendars are connected to Calgate yet; the app would see none.')
      : h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            { class: 'matrix' },
            h('caption', {}, `Calendars ${client.name} may use`),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Calendar', 'Read', 'Write'].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            groups,
          ),
        );

  const toolsetBoxes = consent.toolsets.map((toolset) => {
    const id = `toolset-${toolset.name}`;
    const box = h('input', {
      type: 'checkbox',
      id,
      name: 'toolsets',
      value: toolset.name,
      checked: toolset.checked,
      'aria-describedby': `${id}-about`,
    });
    return {
      box,
      item: h(
        'li',
        {},
        h('label', { class: 'toggle', for: id }, box, ` ${toolset.name}`),
        h('span', { id: `${id}-about`, class: 'muted' }, toolset.description),
      ),
    };
  });

  const currentPolicy = consent.hijackPolicy ?? 'ask';
  const policy = h(
    'select',
    { id: 'consent-hijack-policy', 'aria-describedby': 'consent-hijack-policy-about' },
    HIJACK_POLICY_CHOICES.map(([value, label]) =>
      h('option', { value, selected: value === currentPolicy }, label),
    ),
  );

  async function decide(decision: 'allow' | 'deny'): Promise<void> {
    allow.disabled = true;
    deny.disabled = true;
    status.replaceChildren();
    try {
      const { redirectTo } = await api<{ redirectTo: string }>('POST', '/oauth/consent', {
        request,
        decision,
        calendars: choices.map((choice) => ({
          calendarId: choice.calendarId,
          read: choice.read.checked,
          write: choice.write.checked,
        })),
        toolsets: toolsetBoxes.filter(({ box }) => box.checked).map(({ box }) => box.value),
        hijackPolicy: policy.value,
      });
      status.replaceChildren(notice(`Returning to ${client.redirectHost}…`));
      location.assign(redirectTo);
    } catch (error) {
      status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      allow.disabled = false;
      deny.disabled = false;
    }
  }

  deny.addEventListener('click', () => void decide('deny'));
  const form = h(
    'form',
    { class: 'card consent', 'aria-labelledby': 'consent-heading' },
    h('h2', {}, 'Calendars'),
    h(
      'p',
      { class: 'muted' },
      'Read is ticked for every calendar; tick Write where the app may change events.',
    ),
    calendarTable,
    consent.toolsets.length === 0
      ? null
      : h(
          'fieldset',
          { class: 'toolsets' },
          h('legend', {}, 'Tools the app may use'),
          h(
            'ul',
            { class: 'plain' },
            toolsetBoxes.map(({ item }) => item),
          ),
        ),
    h(
      'fieldset',
      { class: 'hijack-policy' },
      h('legend', {}, 'After suspicious content'),
      h('label', { for: 'consent-hijack-policy' }, 'Confirmations ', policy),
      h(
        'p',
        { id: 'consent-hijack-policy-about', class: 'muted' },
        `Once ${client.name} has read calendar text Calgate withheld, or an invitation from outside your organisation, deleting events, batch changes, inviting outsiders and schedules to named targets need your confirmation. Ask: the app shows you a form when it can, else you confirm in the dashboard. Strict: always in the dashboard. Off: no check. You can change this later under Connected apps.`,
      ),
    ),
    warning,
    status,
    h('div', { class: 'row' }, allow, deny),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void decide('allow');
  });
  updateWarning();

  root.append(
    h('h1', { id: 'consent-heading' }, `Allow ${client.name} to use your calendars?`),
    h('p', {}, `${client.name} asks to reach your calendars through Calgate.`),
    h('p', {}, `You will return to ${client.redirectHost}.`),
    client.kind === 'metadata_document'
      ? h('p', {}, 'The app identifies itself by ', h('code', {}, client.clientId), '.')
      : h('p', { class: 'muted' }, 'Client ID ', h('code', {}, client.clientId)),
    requestedAccess(consent),
    form,
  );
}
