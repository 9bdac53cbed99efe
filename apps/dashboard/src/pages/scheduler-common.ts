/** What the Delivery targets, Schedules and Delivery log pages share. */
import { api } from '../api.ts';
import { type Child, h, notice } from '../dom.ts';

export interface Delivery {
  occurrenceId: string;
  scheduleId: string;
  occurrenceAt: string;
  attempt: number;
  status: 'pending' | 'delivered' | 'failed' | 'missed' | 'retrying' | 'blocked';
  statusCode: number | null;
  error: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

export const DELIVERY_STATUSES = ['delivered', 'failed', 'missed', 'retrying', 'blocked', 'pending'] as const;

export const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** An instant in the viewer's locale and zone, with the zone named. */
export function local(value: string | null | undefined): string {
  if (value === null || value === undefined) {
    return '—';
  }
  // dateStyle and timeStyle cannot be combined with timeZoneName, hence the parts.
  return new Date(value).toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'short',
  });
}

/** A `<time>` whose tooltip is the exact instant. */
export function instant(value: string | null | undefined): HTMLElement | string {
  return value === null || value === undefined
    ? '—'
    : h('time', { datetime: value, title: value }, local(value));
}

const BADGE: Record<string, string> = {
  delivered: 'ok',
  active: 'active',
  failed: 'error',
  missed: 'error',
};

export function badge(status: string): HTMLElement {
  return h('span', { class: `badge ${BADGE[status] ?? ''}` }, status);
}

export function table(caption: string, columns: string[], rows: HTMLElement[]): HTMLElement {
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      {},
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((name) => h('th', { scope: 'col' }, name)),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

/** Runs a page action: its message (or error) in the status region, then the page reloads. */
export type Act = (work: () => Promise<string>) => Promise<void>;

/**
 * "Retry" for an occurrence that failed, was missed or is blocked by a worker's URL policy,
 * "Replay" for one that was delivered: both deliver it again with the same webhook-id. None while
 * it is still being attempted.
 */
export function replayButton(delivery: Delivery, act: Act): Child {
  if (delivery.status === 'pending' || delivery.status === 'retrying') {
    return null;
  }
  const verb = delivery.status === 'delivered' ? 'Replay' : 'Retry';
  return h(
    'button',
    {
      type: 'button',
      class: 'secondary small',
      'aria-label': `${verb} ${delivery.occurrenceId}`,
      onclick: () =>
        void act(async () => {
          await api('POST', `/deliveries/${encodeURIComponent(delivery.occurrenceId)}/replay`);
          return `${verb} of ${delivery.occurrenceId} queued: it is delivered again with the same webhook-id.`;
        }),
    },
    verb,
  );
}

/** An `act` that reports in `status` and then calls `reload`. */
export function actor(status: HTMLElement, reload: () => Promise<void>): Act {
  return async (work) => {
    let result: HTMLElement;
    try {
      result = notice(await work());
    } catch (error) {
      result = notice(message(error), 'error');
    }
    try {
      await reload();
    } catch (error) {
      result = notice(message(error), 'error');
    }
    status.replaceChildren(result);
  };
}

/** The cells of a delivery row after its first column. */
export function deliveryCells(delivery: Delivery): HTMLElement[] {
  return [
    h('td', {}, instant(delivery.occurrenceAt)),
    h('td', { class: 'num' }, delivery.attempt),
    h('td', {}, badge(delivery.status)),
    h('td', { class: 'num' }, delivery.statusCode ?? '—'),
    h('td', {}, delivery.error ?? '—'),
  ];
}
