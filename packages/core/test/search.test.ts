import { describe, expect, it } from 'vitest';
import {
  documentMatches,
  eventMatcher,
  foldText,
  type SearchableEvent,
  searchDocument,
  searchTerms,
  searchWords,
} from '../src/index.ts';

const lunch: SearchableEvent = {
  summary: 'Lunch with Carla at Café Zoë',
  description: 'Bring the Q3-review slides.',
  location: 'Straße 5, Zürich',
  attendees: [{ email: 'pat@acme.com', displayName: 'Pat Smith' }, { email: 'jo.o-brien@example.org' }],
  organizer: { email: 'ÅSA@Nordic.se', displayName: 'Åsa Ångström' },
};

const finds = (query: string, event: SearchableEvent = lunch) => eventMatcher(query)?.(event) ?? false;

describe('folding and words', () => {
  it('folds accents, case and compatibility forms', () => {
    expect(foldText('Café ZOË Ångström')).toBe('cafe zoe angstrom');
    expect(foldText('Straße')).toBe('strasse');
    expect(foldText('ΟΔΟΣ')).toBe(foldText('οδος'));
    expect(foldText('ﬁle ①')).toBe('file 1');
    expect(foldText('İstanbul')).toBe('istanbul');
  });

  it('cuts text into words at every character that is not a letter or digit', () => {
    expect(searchWords('pat@acme.com')).toBe('pat acme com');
    expect(searchWords("  O'Brien -- Q3/review  ")).toBe('o brien q3 review');
    expect(searchWords('!?')).toBe('');
    expect(searchWords('定例会議')).toBe('定 例 会 議');
  });

  it('builds a document from every searched field, fields kept apart', () => {
    expect(searchDocument(lunch)).toBe(
      [
        'lunch with carla at cafe zoe',
        'bring the q3 review slides',
        'strasse 5 zurich',
        'asa nordic se',
        'asa angstrom',
        'pat acme com',
        'pat smith',
        'jo o brien example org',
      ].join(' | '),
    );
    expect(searchDocument({})).toBe('');
    expect(searchDocument({ summary: null, attendees: null, organizer: null })).toBe('');
  });

  it('reads a query as folded terms, punctuation-only words dropped', () => {
    expect(searchTerms('  Carla   LUNCH ')).toEqual(['carla', 'lunch']);
    expect(searchTerms('acme.com , pat')).toEqual(['acme com', 'pat']);
    expect(searchTerms('lunch Lunch')).toEqual(['lunch']);
    expect(searchTerms(' ,;- ')).toBeNull();
    expect(eventMatcher('...')).toBeNull();
  });
});

describe('matching', () => {
  it('finds words in any order, each at the beginning of a word', () => {
    expect(finds('Carla lunch')).toBe(true);
    expect(finds('lunch carla zoe')).toBe(true);
    expect(finds('lun car')).toBe(true);
    expect(finds('arla')).toBe(false);
    expect(finds('carla dinner')).toBe(false);
  });

  it('folds accents and case on both sides', () => {
    expect(finds('cafe')).toBe(true);
    expect(finds('caf')).toBe(true);
    expect(finds('CAFÉ zoe')).toBe(true);
    expect(finds('zurich strasse')).toBe(true);
    expect(finds('straße')).toBe(true);
  });

  it('searches attendees and the organizer by email and name', () => {
    expect(finds('pat@acme.com')).toBe(true);
    expect(finds('acme.com')).toBe(true);
    expect(finds('pat')).toBe(true);
    expect(finds('smith')).toBe(true);
    expect(finds('Pat Smith')).toBe(true);
    expect(finds("o'brien")).toBe(true);
    expect(finds('brien')).toBe(true);
    expect(finds('asa@nordic.se')).toBe(true);
    expect(finds('angstrom')).toBe(true);
    expect(finds('cme.com')).toBe(false);
    expect(finds('pat@example')).toBe(false);
  });

  it('reads a query word with punctuation as a phrase, the last part a beginning', () => {
    expect(finds('q3-review')).toBe(true);
    expect(finds('q3-rev')).toBe(true);
    expect(finds('q-review')).toBe(false);
    expect(finds('pat@acme')).toBe(true);
    expect(finds('pa@acme')).toBe(false);
  });

  it('never matches a phrase across two fields', () => {
    // The summary ends with "zoe", the description starts with "bring".
    expect(finds('zoe.bring')).toBe(false);
    expect(finds('zoe bring')).toBe(true);
  });

  it('takes each ideograph as a word', () => {
    const meeting = { summary: '定例会議 (週次)' };
    expect(finds('会議', meeting)).toBe(true);
    expect(finds('週次 定例', meeting)).toBe(true);
    expect(finds('議会', meeting)).toBe(false);
  });

  it('decides on the document alone', () => {
    const terms = searchTerms('carla acme.com') as string[];
    expect(documentMatches(searchDocument(lunch), terms)).toBe(true);
    expect(documentMatches('', terms)).toBe(false);
  });
});
