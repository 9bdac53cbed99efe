/**
 * quickAdd's text reading: Calgate's own parser (@calgate/core) in its lenient mode, which reads
 * like Google's: the sentence always makes an event (no date means today, no time all day).
 */
import { addDays, formatDate, parseQuickAdd as readSentence, toLocal } from '@calgate/core';
import type { EventDateTime } from '../state.ts';

export interface QuickAddResult {
  summary: string;
  location?: string;
  start: EventDateTime;
  end: EventDateTime;
}

export function parseQuickAdd(text: string, now: number, zone: string): QuickAddResult {
  const read = readSentence(text, { now, timeZone: zone, mode: 'lenient' });
  if (read.ok) {
    const { summary, ...rest } = read.value;
    return { summary: summary ?? text.trim(), ...rest };
  }
  // Google never refuses a sentence: what cannot be read becomes an all-day event today.
  const today = toLocal(now, zone);
  return {
    summary: text.trim(),
    start: { date: formatDate(today) },
    end: { date: formatDate(addDays(today, 1)) },
  };
}
