/**
 * A calendar's secret iCalendar address ("secret address in iCal format"): made, shown once and
 * revoked from the calendar's row on the Calendars page (REST: /api/v1/calendars/:id/feed).
 */
import { api } from '../api.ts';
import { confirmDialog, copyButton, h, notice } from '../dom.ts';

interface Feed {
  id: string;
  createdAt: string;
  url?: string;
}

/** A small control: "iCal address" makes one (after a warning), then shows it with Copy and Revoke. */
export function feedControl(calendar: { id: string; summary: string }): HTMLElement {
  const box = h('div', { class: 'feed' });
  const say = (text: string, kind: 'error' | 'info' = 'info') => box.append(notice(text, kind));
  const make = async () => {
    const ok = await confirmDialog({
      question: `Make a secret iCal address for ${calendar.summary}?`,
      detail:
        'Anyone with the address can read every event of this calendar from any calendar app. A new address replaces the old one, which stops working at once.',
      confirm: 'Make address',
    });
    if (!ok) {
      return;
    }
    try {
      const { feed } = await api<{ feed: Feed }>('POST', `/calendars/${calendar.id}/feed`);
      const url = feed.url ?? '';
      box.replaceChildren(
        h('input', {
          type: 'text',
          readonly: true,
          value: url,
          'aria-label': `iCal address of ${calendar.summary}`,
        }),
        copyButton(url, `Copy the iCal address of ${calendar.summary}`),
        revokeButton(),
        notice('Shown once: copy it now. Calgate keeps only a hash of it.'),
      );
    } catch (error) {
      say(error instanceof Error ? error.message : String(error), 'error');
    }
  };
  const revokeButton = () =>
    h(
      'button',
      {
        type: 'button',
        class: 'secondary danger',
        onclick: async () => {
          const ok = await confirmDialog({
            question: `Revoke the iCal address of ${calendar.summary}?`,
            detail: 'Calendar apps subscribed to it stop receiving this calendar at once.',
            confirm: 'Revoke address',
            danger: true,
          });
          if (!ok) {
            return;
          }
          try {
            await api('DELETE', `/calendars/${calendar.id}/feed`);
            render(false);
            say('iCal address revoked.');
          } catch (error) {
            say(error instanceof Error ? error.message : String(error), 'error');
          }
        },
      },
      'Revoke iCal address',
    );
  const render = (live: boolean) => {
    const make_ = h(
      'button',
      { type: 'button', class: 'secondary', onclick: () => void make() },
      live ? 'New iCal address' : 'iCal address',
    );
    if (live) {
      box.replaceChildren(make_, revokeButton());
    } else {
      box.replaceChildren(make_);
    }
  };
  render(false);
  void api<{ feed: Feed | null }>('GET', `/calendars/${calendar.id}/feed`).then(
    ({ feed }) => render(feed !== null),
    () => {},
  );
  return box;
}
