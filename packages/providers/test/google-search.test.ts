import { CalgateError } from '@calgate/core';
import { describe, expect, it } from 'vitest';
import { type GooglePageReader, searchPages } from '../src/google/search.ts';
import type { CalendarEvent } from '../src/types.ts';

const event = (id: string, summary: string): CalendarEvent => ({
  id,
  status: 'confirmed',
  summary,
  start: { dateTime: '2026-03-02T09:00:00Z' },
  end: { dateTime: '2026-03-02T10:00:00Z' },
});

/** Google's pages of a listing: 3 pages of 4 events, every other one a "Café" event. */
const PAGES = Array.from({ length: 3 }, (_, page) =>
  Array.from({ length: 4 }, (_, i) => {
    const n = page * 4 + i;
    return event(`ev${n}`, n % 2 === 0 ? `Café ${n}` : `Other ${n}`);
  }),
);

function google(): { read: GooglePageReader; sizes: number[] } {
  const sizes: number[] = [];
  return {
    sizes,
    read: async (token, pageSize) => {
      sizes.push(pageSize);
      const index = token === undefined ? 0 : Number(token.slice(1));
      return {
        items: PAGES[index] ?? [],
        ...(index + 1 < PAGES.length ? { nextPageToken: `p${index + 1}` } : {}),
      };
    },
  };
}

async function all(query: string, maxResults: number): Promise<string[][]> {
  const { read } = google();
  const pages: string[][] = [];
  let token: string | undefined;
  do {
    const page = await searchPages(query, maxResults, token, read);
    pages.push(page.items.map((e) => e.id));
    token = page.nextPageToken;
  } while (token !== undefined);
  return pages;
}

describe('search on Google read directly', () => {
  it('reads Google pages at the largest size and keeps what the matcher keeps', async () => {
    const { read, sizes } = google();
    const page = await searchPages('cafe', 10, undefined, read);
    expect(page.items.map((e) => e.id)).toEqual(['ev0', 'ev2', 'ev4', 'ev6', 'ev8', 'ev10']);
    expect(page.nextPageToken).toBeUndefined();
    expect(sizes).toEqual([2500, 2500, 2500]);
  });

  it('pages through matches without losing or repeating one, inside and across Google pages', async () => {
    expect(await all('caf', 1)).toEqual([['ev0'], ['ev2'], ['ev4'], ['ev6'], ['ev8'], ['ev10']]);
    expect(await all('café', 4)).toEqual([
      ['ev0', 'ev2', 'ev4', 'ev6'],
      ['ev8', 'ev10'],
    ]);
    // Two matches per Google page: a full answer ends on a page boundary.
    expect(await all('cafe', 2)).toEqual([
      ['ev0', 'ev2'],
      ['ev4', 'ev6'],
      ['ev8', 'ev10'],
    ]);
  });

  it('answers nothing for a query without words, and refuses a page token of another listing', async () => {
    const { read, sizes } = google();
    expect(await searchPages('?!', 10, undefined, read)).toEqual({ items: [] });
    expect(sizes).toEqual([]);
    await expect(searchPages('cafe', 10, 'CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA', read)).rejects.toThrow(
      CalgateError,
    );
  });
});
