import { h } from './dom.ts';

/** A searchable choice of IANA time zone: a combobox over every zone the browser knows. */
export interface ZonePicker {
  /** The combobox, its list and the line under it; place it after its label. */
  element: HTMLElement;
  /** The text field (label it with `for` = the id given). */
  input: HTMLInputElement;
  /** The zone chosen; null when the field is empty and `empty` allowed that. */
  value(): string | null;
  /** Shows this zone (or none) as chosen, e.g. after the form is reset. */
  set(zone: string | null): void;
}

/**
 * Old names that browsers (ICU) still list and resolve to, by their current IANA names: the list
 * shows the current name, and a search finds both.
 */
const RENAMED: Readonly<Record<string, string>> = {
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Asia/Rangoon': 'Asia/Yangon',
  'Europe/Kiev': 'Europe/Kyiv',
  'America/Godthab': 'America/Nuuk',
  'Pacific/Truk': 'Pacific/Chuuk',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
};
const FORMER = new Map(Object.entries(RENAMED).map(([old, current]) => [current, old]));

function supported(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A zone by its current name, when the browser knows that name. */
function current(zone: string): string {
  const renamed = RENAMED[zone];
  return renamed !== undefined && supported(renamed) ? renamed : zone;
}

/** The zone the browser runs in, e.g. Europe/Berlin (UTC if it cannot say). */
export function browserTimeZone(): string {
  return current(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
}

let zones: string[] | undefined;

/** Every zone the browser knows, by current names, with UTC (which browsers leave out of the list). */
export function allZones(): string[] {
  zones ??= (() => {
    const known = Intl.supportedValuesOf('timeZone').map(current);
    return known.includes('UTC') ? known : ['UTC', ...known];
  })();
  return zones;
}

const offsets = new Map<string, string>();

/** The zone's offset from UTC now, e.g. "UTC+01:00", "UTC−03:30", "UTC+00:00". */
export function currentOffset(zone: string): string {
  let offset = offsets.get(zone);
  if (offset === undefined) {
    const name = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
      .formatToParts(new Date())
      .find((part) => part.type === 'timeZoneName')?.value;
    offset = name === undefined || name === 'GMT' ? 'UTC+00:00' : name.replace('GMT', 'UTC');
    offsets.set(zone, offset);
  }
  return offset;
}

/** Lower case, accents off, `_` and `/` as spaces: "América/Sao_Paulo" → "america sao paulo". */
function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/[_/]+/g, ' ');
}

/** The city first, then the region: "Berlin (Europe)", "Argentina / Buenos Aires (America)". */
function cityOf(zone: string): string {
  const parts = zone.split('/').map((part) => part.replace(/_/g, ' '));
  if (parts.length === 1) {
    return parts[0] ?? zone;
  }
  return `${parts.slice(1).join(' / ')} (${parts[0]})`;
}

/** Zones whose words start with every word of the query, in any order; cities matching first. */
function search(query: string, within: readonly string[]): string[] {
  const words = fold(query)
    .split(/\s+/)
    .filter((word) => word !== '');
  if (words.length === 0) {
    return [...within];
  }
  const hits = within.filter((zone) => {
    const names = fold(`${zone} ${FORMER.get(zone) ?? ''}`).split(' ');
    return words.every((word) => names.some((name) => name.startsWith(word)));
  });
  const city = (zone: string) => fold(zone.split('/').at(-1) ?? zone);
  return hits.sort((a, b) => {
    const first = words[0] ?? '';
    return Number(!city(a).startsWith(first)) - Number(!city(b).startsWith(first)) || a.localeCompare(b);
  });
}

const SHOWN = 50;

/**
 * A combobox (ARIA 1.2 pattern) for an IANA zone: typing a city, region or zone name lists the
 * matching zones with their current offsets; Enter, a click or an exact zone name chooses one.
 * It never keeps free text: leaving the field with anything else puts the last choice back.
 * With `empty`, an emptied field means "no zone" and the placeholder says what applies then.
 */
export function zonePicker(options: {
  id: string;
  value: string | null;
  /** Allows no zone; the text shown then (e.g. "Workspace zone (Europe/Berlin)"). */
  empty?: string;
  /** An accessible name when no <label for> names the field. */
  label?: string;
}): ZonePicker {
  const known = allZones();
  const list = options.value !== null && !known.includes(options.value) ? [options.value, ...known] : known;
  let chosen = options.value;
  let matches: string[] = [];
  let active = -1;
  const listId = `${options.id}-zones`;
  const input = h('input', {
    id: options.id,
    type: 'text',
    role: 'combobox',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': listId,
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: options.empty ?? 'Search a city or region',
    value: chosen ?? '',
    ...(options.label === undefined ? {} : { 'aria-label': options.label }),
  });
  const listbox = h('ul', { id: listId, role: 'listbox', class: 'zone-list', hidden: true });
  const hint = h('span', { class: 'muted zone-offset', 'aria-live': 'polite' });
  input.setAttribute('aria-describedby', `${options.id}-offset`);
  hint.id = `${options.id}-offset`;

  function describe(): void {
    // With no zone chosen the placeholder already says what applies.
    hint.textContent = chosen === null ? '' : `${cityOf(chosen)}: now ${currentOffset(chosen)}`;
  }

  function close(): void {
    listbox.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  }

  function choose(zone: string | null): void {
    chosen = zone;
    input.value = zone ?? '';
    input.setCustomValidity('');
    close();
    describe();
    input.dispatchEvent(new Event('change', { bubbles: true }));
  }

  function highlight(index: number): void {
    const items = [...listbox.children];
    items.forEach((item, at) => {
      item.setAttribute('aria-selected', String(at === index));
    });
    active = index;
    const item = items[index];
    if (item === undefined) {
      input.removeAttribute('aria-activedescendant');
      return;
    }
    input.setAttribute('aria-activedescendant', item.id);
    item.scrollIntoView({ block: 'nearest' });
  }

  function open(): void {
    matches = search(input.value, list);
    listbox.replaceChildren(
      ...matches.slice(0, SHOWN).map((zone, index) => {
        const option = h(
          'li',
          { id: `${listId}-${index}`, role: 'option', 'aria-selected': 'false', 'data-zone': zone },
          `${cityOf(zone)} — ${zone} · ${currentOffset(zone)}`,
        );
        // mousedown, not click: it must choose before the field's blur puts the old value back.
        option.addEventListener('mousedown', (event) => {
          event.preventDefault();
          choose(zone);
        });
        return option;
      }),
      ...(matches.length > SHOWN
        ? [
            h(
              'li',
              { role: 'presentation', class: 'muted' },
              `${matches.length - SHOWN} more: type more of the name`,
            ),
          ]
        : []),
      ...(matches.length === 0 ? [h('li', { role: 'presentation', class: 'muted' }, 'No zone matches')] : []),
    );
    listbox.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    highlight(matches.length > 0 ? 0 : -1);
  }

  /** The zone the text names exactly (any case), if any. */
  function exact(text: string): string | undefined {
    const wanted = text.trim().toLowerCase();
    return list.find((zone) => zone.toLowerCase() === wanted);
  }

  input.addEventListener('input', () => {
    input.setCustomValidity('');
    open();
  });
  input.addEventListener('focus', () => input.select());
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (listbox.hidden) {
        open();
        return;
      }
      const shown = Math.min(matches.length, SHOWN);
      if (shown > 0) {
        highlight((active + (event.key === 'ArrowDown' ? 1 : shown - 1)) % shown);
      }
    } else if (event.key === 'Enter' && !listbox.hidden) {
      event.preventDefault();
      const zone = matches[active] ?? exact(input.value);
      if (zone !== undefined) {
        choose(zone);
      }
    } else if (event.key === 'Escape' && !listbox.hidden) {
      event.preventDefault();
      input.value = chosen ?? '';
      close();
    }
  });
  input.addEventListener('blur', () => {
    const text = input.value.trim();
    if (text === '' && options.empty !== undefined) {
      if (chosen !== null) {
        choose(null);
      }
      close();
      return;
    }
    // An exact name, or text that only one zone matches ("kathmandu"), chooses it.
    const only = search(text, list);
    const zone = exact(text) ?? (only.length === 1 ? only[0] : undefined);
    if (zone !== undefined) {
      if (zone !== chosen) {
        choose(zone);
      } else {
        input.value = zone;
        close();
      }
      return;
    }
    // Not a zone: the last choice stays.
    input.value = chosen ?? '';
    close();
  });
  describe();
  return {
    element: h('div', { class: 'zone-picker' }, input, listbox, hint),
    input,
    value: () => chosen,
    set(zone) {
      chosen = zone;
      input.value = zone ?? '';
      describe();
    },
  };
}
