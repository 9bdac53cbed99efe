import { api } from '../api.ts';
import { h, notice } from '../dom.ts';

interface KeyView {
  id: string;
  name: string;
  revokedAt: string | null;
}

/**
 * "Subscribe to a calendar feed (.ics / webcal)": a name, the feed's address and the API keys
 * that may read it. The feed is fetched once before anything is saved; a subscribed calendar is
 * read-only, so keys get read access only.
 */
export async function icsSection(onAdded: () => Promise<void>): Promise<HTMLElement> {
  const status = h('div', { 'aria-live': 'polite' });
  const name = h('input', { id: 'ics-name', name: 'name', required: true, maxlength: '200' });
  const url = h('input', {
    id: 'ics-url',
    name: 'url',
    required: true,
    placeholder: 'https://example.com/calendar.ics or webcal://…',
  });
  const { keys } = await api<{ keys: KeyView[] }>('GET', '/keys');
  const live = keys.filter((key) => key.revokedAt === null);
  const boxes = live.map((key) =>
    h('input', { type: 'checkbox', value: key.id, checked: true, id: `ics-key-${key.id}` }),
  );
  const keyList = h(
    'fieldset',
    { id: 'ics-keys' },
    h('legend', {}, 'API keys that may read it'),
    live.length === 0
      ? h('p', { class: 'muted' }, 'No API keys yet: grant it later in Permissions.')
      : live.map((key, index) =>
          h('label', { class: 'checkbox', for: `ics-key-${key.id}` }, boxes[index], ` ${key.name}`),
        ),
  );
  const form = h(
    'form',
    {},
    h('label', { for: 'ics-name' }, 'Calendar name'),
    name,
    h('label', { for: 'ics-url' }, 'Feed address'),
    url,
    keyList,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Subscribe')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const chosen = boxes.filter((box) => box.checked).map((box) => box.value);
      try {
        const result = await api<{ accountEmail: string; events: number; calendars: { summary: string }[] }>(
          'POST',
          '/connections/ics',
          {
            name: name.value.trim(),
            url: url.value.trim(),
            access: chosen.length === 0 ? 'none' : 'read',
            keyIds: chosen,
          },
        );
        status.replaceChildren(
          notice(`Subscribed to ${result.accountEmail}: ${result.events} event(s) in the feed now.`),
        );
        form.reset();
        for (const box of boxes) {
          box.checked = true;
        }
        await onAdded();
      } catch (error) {
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      }
    })();
  });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'ics-title' },
    h('h2', { id: 'ics-title' }, 'Subscribe to a calendar feed (.ics / webcal)'),
    h(
      'p',
      {},
      'Holidays, sports, school terms or anyone’s published calendar: a read-only calendar that Calgate refreshes in the background. The address is stored sealed.',
    ),
    form,
    status,
  );
}
