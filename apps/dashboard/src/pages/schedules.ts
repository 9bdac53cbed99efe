import { api } from '../api.ts';
import { type Child, h } from '../dom.ts';
import {
  type Act,
  actor,
  badge,
  type Delivery,
  deliveryCells,
  instant,
  replayButton,
  table,
} from './scheduler-common.ts';

interface Schedule {
  scheduleId: string;
  kind: string;
  description: string;
  prompt: string;
  status: 'active' | 'paused' | 'cancelled' | 'finished';
  nextRun: string | null;
  /** Why there is no next run (paused, no matching event in the window …); null when there is one. */
  nextRunReason: string | null;
  timeZone: string | null;
  agentId: string | null;
  repetitionsDone: number;
  maxRepetitions: number | null;
  createdAt: string;
  keyId: string;
  keyName: string | null;
  target: { id: string; name: string; kind: string; origin: string; disabled: boolean } | null;
  recentDeliveries: Delivery[];
}

interface SchedulerStatus {
  workers: { name: string; lastSeen: string }[];
  queueDepth: number;
  lagSeconds: number;
  last24h: { delivered: number; failed: number; missed: number; retrying: number; blocked: number };
}

const PROMPT_PREVIEW = 160;

function statusCard(status: SchedulerStatus): HTMLElement {
  const { workers, last24h } = status;
  const running =
    workers.length === 0
      ? h(
          'p',
          { class: 'notice error', role: 'alert' },
          'No worker is running: prompts that fall due wait until one starts (calgate worker, or calgate start).',
        )
      : h('p', {}, `${workers.length} worker${workers.length === 1 ? '' : 's'} running.`);
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'scheduler-status' },
    h('h2', { id: 'scheduler-status' }, 'Delivery'),
    running,
    h(
      'p',
      {},
      `Queue: ${status.queueDepth} due${status.queueDepth > 0 ? `, the oldest ${status.lagSeconds} s late` : ''}. `,
      `Last 24 hours: ${last24h.delivered} delivered, ${last24h.failed} failed, ${last24h.missed} missed, ${last24h.retrying} retrying, ${last24h.blocked} blocked by the URL policy.`,
    ),
  );
}

function promptCell(prompt: string): HTMLElement {
  if (prompt.length <= PROMPT_PREVIEW) {
    return h('p', { class: 'pre' }, prompt);
  }
  return h(
    'details',
    {},
    h('summary', {}, `${prompt.slice(0, PROMPT_PREVIEW).trimEnd()}…`),
    h('p', { class: 'pre' }, prompt),
  );
}

function actions(schedule: Schedule, act: Act): HTMLElement {
  const button = (verb: 'pause' | 'resume' | 'cancel', label: string, done: string) =>
    h(
      'button',
      {
        type: 'button',
        class: verb === 'cancel' ? 'danger' : 'secondary',
        onclick: () =>
          void act(async () => {
            await api('POST', `/schedules/${schedule.scheduleId}/${verb}`);
            return `Scheduled prompt ${schedule.scheduleId} ${done}.`;
          }),
      },
      label,
    );
  const live = schedule.status === 'active' || schedule.status === 'paused';
  return h(
    'div',
    { class: 'row actions' },
    schedule.status === 'active' ? button('pause', 'Pause', 'paused') : null,
    schedule.status === 'paused' ? button('resume', 'Resume', 'resumed') : null,
    live ? button('cancel', 'Cancel', 'cancelled') : null,
  );
}

function scheduleCard(schedule: Schedule, act: Act): HTMLElement {
  const heading = `heading-${schedule.scheduleId}`;
  const last = schedule.recentDeliveries[0];
  const target =
    schedule.target === null
      ? '— (deleted)'
      : [
          schedule.target.name,
          ' ',
          h('span', { class: 'muted' }, `(${schedule.target.kind}, ${schedule.target.origin})`),
          ...(schedule.target.disabled ? [' ', badge('disabled')] : []),
        ];
  const repetitions =
    schedule.maxRepetitions === null
      ? `${schedule.repetitionsDone}`
      : `${schedule.repetitionsDone} of ${schedule.maxRepetitions}`;
  const facts: [string, Child | Child[]][] = [
    ['Status', badge(schedule.status)],
    [
      'Next run',
      schedule.nextRun !== null
        ? instant(schedule.nextRun)
        : h('span', { class: 'muted' }, schedule.nextRunReason ?? '—'),
    ],
    ['Key', schedule.keyName === null ? schedule.keyId : `${schedule.keyName} (${schedule.keyId})`],
    ['Target', target],
    ...(schedule.agentId === null ? [] : [['Agent', h('code', {}, schedule.agentId)] as [string, Child]]),
    ['Repetitions', repetitions],
    [
      'Last delivery',
      last === undefined ? 'none yet' : [badge(last.status), ' ', instant(last.occurrenceAt)],
    ],
    ['Created', instant(schedule.createdAt)],
  ];
  const deliveries =
    schedule.recentDeliveries.length === 0
      ? h('p', { class: 'muted' }, 'No deliveries yet.')
      : h(
          'details',
          { open: true },
          h('summary', {}, `Recent deliveries (${schedule.recentDeliveries.length})`),
          table(
            `Recent deliveries of ${schedule.scheduleId}`,
            ['Occurrence (webhook-id)', 'Scheduled for', 'Attempt', 'Status', 'HTTP', 'Error', 'Actions'],
            schedule.recentDeliveries.map((delivery) =>
              h(
                'tr',
                {},
                h('th', { scope: 'row' }, h('code', {}, delivery.occurrenceId)),
                deliveryCells(delivery),
                h('td', { class: 'actions' }, replayButton(delivery, act)),
              ),
            ),
          ),
        );
  return h(
    'article',
    { class: 'card', 'aria-labelledby': heading, 'data-schedule-id': schedule.scheduleId },
    h('h3', { id: heading }, schedule.description),
    h('p', { class: 'muted' }, h('code', {}, schedule.scheduleId), ` · ${schedule.kind}`),
    promptCell(schedule.prompt),
    h(
      'dl',
      { class: 'facts' },
      facts.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
    ),
    actions(schedule, act),
    deliveries,
  );
}

/**
 * Every key's scheduled prompts, newest first: what and when, which key owns each, where it goes,
 * how its recent deliveries went; pause, resume, cancel, and retry or replay a delivery.
 */
export async function renderSchedules(root: HTMLElement): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const state = h('div', {});
  const list = h('div', {});
  const showCancelled = h('input', { id: 'show-cancelled', type: 'checkbox' });
  const act = actor(status, load);

  async function load(): Promise<void> {
    const query = showCancelled.checked ? '?includeCancelled=true' : '';
    const answer = await api<{ schedules: Schedule[]; scheduler: SchedulerStatus }>(
      'GET',
      `/schedules${query}`,
    );
    state.replaceChildren(statusCard(answer.scheduler));
    list.replaceChildren(
      ...(answer.schedules.length === 0
        ? [h('p', {}, 'No scheduled prompts yet: agents create them with the schedule_prompt tool.')]
        : answer.schedules.map((schedule) => scheduleCard(schedule, act))),
    );
  }

  showCancelled.addEventListener(
    'change',
    () =>
      void act(async () =>
        showCancelled.checked ? 'Cancelled prompts are shown too.' : 'Cancelled prompts are hidden.',
      ),
  );
  root.append(
    h('p', {}, 'Prompts the agents of every key have scheduled for themselves. Times are in your zone.'),
    state,
    status,
    h('label', { class: 'toggle', for: 'show-cancelled' }, showCancelled, ' Show cancelled prompts'),
    list,
  );
  await load();
}
