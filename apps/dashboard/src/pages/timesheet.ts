import { api } from '../api.ts';
import { h, notice } from '../dom.ts';
import { zonePicker } from '../zone-picker.ts';

interface Timesheet {
  week?: string;
  timeZone: string;
  days: string[];
  rows: {
    projectId: string | null;
    project: string;
    client: string | null;
    colour: string | null;
    hours: number[];
    total: number;
  }[];
  dayTotals: number[];
  total: number;
  overlaps: { date: string; projectIds: string[]; minutes: number }[];
  excluded: { declined: number; allDay: number; skipped: number };
}

interface Applied {
  occurrences: number;
  classified: number;
  needsReview: number;
  pending: number;
  changed: number;
  created: number;
}

/** `YYYY-Www` of the ISO week holding `date` (local calendar date). */
export function isoWeekOf(date: Date): string {
  const thursday = new Date(Date.UTC(date.getFullYear(), date.getMonth(), date.getDate()));
  thursday.setUTCDate(thursday.getUTCDate() - ((thursday.getUTCDay() + 6) % 7) + 3);
  const year = thursday.getUTCFullYear();
  const week = Math.ceil(((thursday.getTime() - Date.UTC(year, 0, 1)) / 86_400_000 + 1) / 7);
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** A project's colour dot; set through the CSSOM, which the dashboard's CSP allows. */
export function swatch(colour: string): HTMLElement {
  const dot = h('span', { class: 'swatch', 'aria-hidden': 'true' });
  dot.style.backgroundColor = colour;
  return dot;
}

const hours = (value: number) => (value === 0 ? '–' : value.toFixed(2));

const dayLabel = (date: string) =>
  new Date(`${date}T12:00:00Z`).toLocaleDateString(undefined, {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    timeZone: 'UTC',
  });

/** The weekly timesheet: projects × days with totals, a week picker, CSV and "apply rules". */
export function timesheetSection() {
  const week = h('input', { id: 'timesheet-week', name: 'week', type: 'week', value: isoWeekOf(new Date()) });
  // Filled in by the first answer: the workspace's zone (else the calendars' shared zone).
  const zone = zonePicker({ id: 'timesheet-zone', value: null });
  const status = h('div', { 'aria-live': 'polite' });
  const table = h('div', {});
  const csv = h('a', { class: 'button', download: '' }, 'Download CSV');
  const apply = h('button', { type: 'button', class: 'secondary' }, 'Apply rules to this week');
  const element = h(
    'section',
    { 'aria-labelledby': 'timesheet-heading' },
    h('h2', { id: 'timesheet-heading' }, 'Timesheet'),
    h(
      'div',
      { class: 'filters' },
      h('div', {}, h('label', { for: 'timesheet-week' }, 'Week'), week),
      h('div', {}, h('label', { for: 'timesheet-zone' }, 'Time zone'), zone.element),
      apply,
      csv,
    ),
    status,
    table,
  );

  function draw(sheet: Timesheet): void {
    table.replaceChildren(
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { id: 'timesheet-table' },
          h('caption', {}, `Hours in week ${sheet.week ?? ''} (${sheet.timeZone})`),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, 'Project'),
              sheet.days.map((day) => h('th', { scope: 'col', class: 'num' }, dayLabel(day))),
              h('th', { scope: 'col', class: 'num' }, 'Total'),
            ),
          ),
          h(
            'tbody',
            {},
            sheet.rows.map((row) =>
              h(
                'tr',
                {},
                h(
                  'th',
                  { scope: 'row' },
                  row.projectId === null ? null : swatch(row.colour ?? '#ccc'),
                  ` ${row.project}`,
                  row.client === null ? '' : h('span', { class: 'muted' }, ` · ${row.client}`),
                ),
                row.hours.map((value) => h('td', { class: 'num' }, hours(value))),
                h('td', { class: 'num' }, hours(row.total)),
              ),
            ),
          ),
          h(
            'tfoot',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, 'Total'),
              sheet.dayTotals.map((value) => h('td', { class: 'num' }, hours(value))),
              h('td', { class: 'num' }, hours(sheet.total)),
            ),
          ),
        ),
      ),
      h(
        'p',
        { class: 'muted' },
        `Rounded to 15 minutes per project and day. Left out: ${sheet.excluded.declined} declined, ${sheet.excluded.allDay} all-day, ${sheet.excluded.skipped} skipped.`,
        sheet.overlaps.length === 0
          ? ''
          : ` ${sheet.overlaps.length} overlaps between projects are counted for both.`,
      ),
    );
  }

  async function load(): Promise<void> {
    const chosen = week.value;
    const inZone = zone.value();
    const query = `week=${encodeURIComponent(chosen)}${inZone === null ? '' : `&timeZone=${encodeURIComponent(inZone)}`}`;
    csv.setAttribute('href', `/api/v1/timesheet.csv?${query}`);
    csv.setAttribute('download', `calgate-timesheet-${chosen}.csv`);
    try {
      const sheet = await api<Timesheet>('GET', `/timesheet?${query}`);
      if (inZone === null) {
        zone.set(sheet.timeZone);
        csv.setAttribute(
          'href',
          `/api/v1/timesheet.csv?${query}&timeZone=${encodeURIComponent(sheet.timeZone)}`,
        );
      }
      draw(sheet);
    } catch (error) {
      table.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
    }
  }

  week.addEventListener('change', () => {
    if (week.value !== '') {
      void load();
    }
  });
  zone.input.addEventListener('change', () => {
    if (zone.value() !== null) {
      void load();
    }
  });
  apply.addEventListener('click', () => {
    void (async () => {
      apply.disabled = true;
      try {
        const result = await api<Applied>('POST', '/rules/apply', {
          week: week.value,
          ...(zone.value() === null ? {} : { timeZone: zone.value() }),
        });
        await load();
        status.replaceChildren(
          notice(
            `Rules applied to ${week.value}: ${result.occurrences} events, ${result.classified} filed (${result.needsReview} to review), ${result.pending} pending, ${result.created + result.changed} changed.`,
          ),
        );
      } catch (error) {
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      } finally {
        apply.disabled = false;
      }
    })();
  });

  return {
    element,
    load,
  };
}
