/**
 * Generated calendars for the mirror benchmark: realistic meeting titles, descriptions and
 * places in several languages (accented words included, so accent folding is exercised), from a
 * seeded generator so every run stores the same text.
 */
import type { MirrorEventInput } from '@calgate/store';

/** A small deterministic generator (mulberry32): the same data on every run. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;

const TOPICS = [
  'Budget review',
  'Quarterly planning',
  'Réunion d’équipe',
  'Café avec Zoë',
  'Entretien annuel',
  'Besprechung Übergabe',
  'Déjeuner client',
  'Design critique',
  'Sprint retrospective',
  'Onboarding session',
  'Roadmap workshop',
  'Kundentermin München',
  'Préparation du séminaire',
  'Revisión del presupuesto',
  'Reunião de equipa',
  'Hiring committee',
  'Incident postmortem',
  'Architecture sync',
  'Formation sécurité',
  'Weekly standup',
  'Investor update',
  'Product demo',
  'Vertragsprüfung',
  'Conférence de presse',
  'Team offsite',
];
const WITH = [
  'Anaïs',
  'Björn',
  'Chloé',
  'Daniel',
  'Élodie',
  'François',
  'Jürgen',
  'Łukasz',
  'Maëlle',
  'Noémie',
  'Søren',
  'Zoë',
  'Priya',
  'Mateo',
];
const PROJECTS = ['Atlas', 'Borealis', 'Cèdre', 'Dune', 'Éclipse', 'Fjord', 'Gaïa', 'Helios', 'Iris', 'Jura'];
const PLACES = [
  'Zürich HQ, Raum Säntis',
  'Café de Flore, Paris',
  'Kraków office',
  'São Paulo hub',
  'Room 4B',
  'Málaga',
  'Online',
  'Genève, salle Léman',
  'Köln Messe',
  'Montréal',
];
const NOTES = [
  'Agenda: décisions sur le budget, next steps and owners.',
  'Bitte die Unterlagen vorher lesen; Protokoll folgt.',
  'Prepare the numbers for the quarterly forecast.',
  'Ordre du jour envoyé par e-mail. Présence obligatoire.',
  'Review of the hiring pipeline and interview feedback.',
  'Dial-in details in the invitation; please be on time.',
  'Retour d’expérience après la mise en production.',
  'Discuss risks, dependencies and the migration plan.',
];

/** One generated event's text. */
export function eventText(rand: () => number): { summary: string; description: string; location: string } {
  const topic = pick(rand, TOPICS);
  const roll = rand();
  const summary =
    roll < 0.35
      ? `${topic} – ${pick(rand, PROJECTS)}`
      : roll < 0.6
        ? `${topic} with ${pick(rand, WITH)}`
        : topic;
  return {
    summary,
    description: `${pick(rand, NOTES)} Projet ${pick(rand, PROJECTS)}, contact ${pick(rand, WITH)}.`,
    location: pick(rand, PLACES),
  };
}

const YEAR_START = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const HOUR = 3_600_000;
const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** Google's instance-id key for an instant: `20260105T080000Z`. */
export const instanceKey = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

export interface EmulatorCalendarSpec {
  events: Record<string, unknown>[];
  /** Series masters (by their client-chosen ids) and the first instant of each. */
  series: { id: string; firstStart: number }[];
}

/**
 * A Google calendar for the emulator: `singles` single events over 2026 (one in twenty all-day),
 * and `masters` weekly series with client-chosen ids, whose exceptions are made afterwards
 * through the API (as users make them).
 */
export function emulatorCalendar(seed: number, singles: number, masters: number): EmulatorCalendarSpec {
  const rand = random(seed);
  const events: Record<string, unknown>[] = [];
  for (let i = 0; i < singles; i++) {
    const day = YEAR_START + Math.floor(rand() * 365) * DAY;
    const text = eventText(rand);
    if (i % 20 === 0) {
      const days = 1 + Math.floor(rand() * 3);
      events.push({ ...text, start: { date: isoDate(day) }, end: { date: isoDate(day + days * DAY) } });
    } else {
      const start = day + (7 + Math.floor(rand() * 11)) * HOUR + (rand() < 0.5 ? 0 : 30 * 60_000);
      events.push({
        ...text,
        start: { dateTime: new Date(start).toISOString(), timeZone: 'Europe/Berlin' },
        end: {
          dateTime: new Date(start + (rand() < 0.7 ? 1 : 0.5) * HOUR).toISOString(),
          timeZone: 'Europe/Berlin',
        },
      });
    }
  }
  const series: EmulatorCalendarSpec['series'] = [];
  for (let i = 0; i < masters; i++) {
    const id = `series${seed}v${String(i).padStart(4, '0')}`;
    const firstStart = YEAR_START + Math.floor(rand() * 60) * DAY + (8 + (i % 9)) * HOUR;
    series.push({ id, firstStart });
    events.push({
      id,
      ...eventText(rand),
      start: { dateTime: new Date(firstStart).toISOString(), timeZone: 'UTC' },
      end: { dateTime: new Date(firstStart + HOUR).toISOString(), timeZone: 'UTC' },
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=40'],
    });
  }
  return { events, series };
}

/**
 * A calendar's events as a sync would hand them to the mirror, without Google in the loop:
 * singles over 2026 (one in twenty all-day), weekly masters and one moved exception per master.
 */
export function mirrorCalendar(seed: number, singles: number, masters: number): MirrorEventInput[] {
  const rand = random(seed);
  const out: MirrorEventInput[] = [];
  const base = (eventId: string, start: number, end: number, allDay: boolean): MirrorEventInput => {
    const text = eventText(rand);
    const raw = {
      kind: 'calendar#event',
      id: eventId,
      status: 'confirmed',
      ...text,
      start: allDay ? { date: isoDate(start) } : { dateTime: new Date(start).toISOString() },
      end: allDay ? { date: isoDate(end) } : { dateTime: new Date(end).toISOString() },
    };
    return {
      eventId,
      recurringEventId: null,
      originalStart: null,
      status: 'confirmed',
      ...text,
      allDay,
      startAt: new Date(start),
      endAt: new Date(end),
      startDate: allDay ? isoDate(start) : null,
      endDate: allDay ? isoDate(end) : null,
      startTimeZone: allDay ? null : 'Europe/Berlin',
      endTimeZone: allDay ? null : 'Europe/Berlin',
      recurrence: [],
      attendees: null,
      updated: new Date(YEAR_START),
      etag: `"${seed}-${eventId}"`,
      raw,
    };
  };
  for (let i = 0; i < singles; i++) {
    const day = YEAR_START + Math.floor(rand() * 365) * DAY;
    if (i % 20 === 0) {
      out.push(base(`s${seed}e${i}`, day, day + DAY, true));
    } else {
      const start = day + (7 + Math.floor(rand() * 11)) * HOUR;
      out.push(base(`s${seed}e${i}`, start, start + HOUR, false));
    }
  }
  for (let i = 0; i < masters; i++) {
    const first = YEAR_START + Math.floor(rand() * 60) * DAY + 9 * HOUR;
    const master = base(`s${seed}m${i}`, first, first + HOUR, false);
    out.push({ ...master, recurrence: ['RRULE:FREQ=WEEKLY;COUNT=40'] });
    const original = first + 7 * DAY * (1 + Math.floor(rand() * 30));
    const moved = base(
      `${master.eventId}_${instanceKey(original)}`,
      original + 2 * HOUR,
      original + 3 * HOUR,
      false,
    );
    out.push({ ...moved, recurringEventId: master.eventId, originalStart: new Date(original) });
  }
  return out;
}
