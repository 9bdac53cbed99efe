import { api } from '../api.ts';
import { h } from '../dom.ts';
import {
  actor,
  DELIVERY_STATUSES,
  type Delivery,
  deliveryCells,
  instant,
  replayButton,
} from './scheduler-common.ts';

interface LoggedDelivery extends Delivery {
  schedule: { id: string; description: string; status: string } | null;
}

const COLUMNS = [
  'Occurrence (webhook-id)',
  'Schedule',
  'Scheduled for',
  'Attempt',
  'Status',
  'HTTP',
  'Error',
  'Recorded',
  'Actions',
];

/** The tenant's deliveries across schedules, newest first, 50 a page, filtered by status. */
export async function renderDeliveries(root: HTMLElement): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const filter = h(
    'select',
    { id: 'f-status', name: 'status' },
    h('option', { value: '' }, 'Any status'),
    DELIVERY_STATUSES.map((value) => h('option', { value }, value)),
  );
  const rows = h('tbody', {});
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Older deliveries');
  let cursor: string | null = null;
  const act = actor(status, () => load(false));

  function row(delivery: LoggedDelivery): HTMLElement {
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, h('code', {}, delivery.occurrenceId)),
      h(
        'td',
        {},
        delivery.schedule === null
          ? h('code', {}, delivery.scheduleId)
          : [delivery.schedule.description, h('br', {}), h('code', { class: 'muted' }, delivery.scheduleId)],
      ),
      deliveryCells(delivery),
      h('td', {}, instant(delivery.createdAt)),
      h('td', { class: 'actions' }, replayButton(delivery, act)),
    );
  }

  async function load(append: boolean): Promise<void> {
    const query = new URLSearchParams({ limit: '50' });
    if (filter.value !== '') {
      query.set('status', filter.value);
    }
    if (append && cursor !== null) {
      query.set('before', cursor);
    }
    const page = await api<{ deliveries: LoggedDelivery[]; nextCursor: string | null }>(
      'GET',
      `/deliveries?${query}`,
    );
    cursor = page.nextCursor;
    more.hidden = cursor === null;
    const list = page.deliveries.map(row);
    if (append) {
      rows.append(...list);
    } else {
      rows.replaceChildren(
        ...(list.length === 0
          ? [h('tr', {}, h('td', { colspan: String(COLUMNS.length) }, 'No deliveries match.'))]
          : list),
      );
    }
  }

  const form = h(
    'form',
    { class: 'card filters', 'aria-label': 'Filter the delivery log' },
    h('div', {}, h('label', { for: 'f-status' }, 'Status'), filter),
    h('div', {}, h('button', { type: 'submit' }, 'Filter')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(async () =>
      filter.value === '' ? 'Showing every status.' : `Showing ${filter.value} deliveries.`,
    );
  });
  more.addEventListener('click', () => void load(true));
  root.append(
    h(
      'p',
      {},
      'Every occurrence of every scheduled prompt, newest first. The occurrence id is the webhook-id each attempt carries, so receivers can drop duplicates.',
    ),
    form,
    status,
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        {},
        h('caption', {}, 'Deliveries, newest first'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            COLUMNS.map((name) => h('th', { scope: 'col' }, name)),
          ),
        ),
        rows,
      ),
    ),
    more,
  );
  await load(false);
}
