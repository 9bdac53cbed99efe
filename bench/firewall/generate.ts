// Writes the firewall corpus, deterministically (a fixed seed): bench/firewall/injections.jsonl
// (the payloads of payloads.ts, then disguised variants: look-alike letters, spacing, splitting,
// leetspeak, encodings, markup, payloads buried in real meeting text) and
// bench/firewall/benign.jsonl (ordinary meeting titles, descriptions, locations and comments in
// many languages from meetings.ts). Run: node bench/firewall/generate.ts
import { writeFileSync } from 'node:fs';
import { COMPANIES, EMOJI, LANGUAGES, LOOKALIKES, SNIPPETS } from './meetings.ts';
import { DISGUISED, PAYLOADS } from './payloads.ts';

export interface CorpusEntry {
  id: string;
  kind: string;
  lang: string;
  field: string;
  text: string;
}

const BENIGN_COUNT = 1200;

/** mulberry32: a small seeded generator, so the corpus is the same on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = seeded(20260301);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
const int = (min: number, max: number) => min + Math.floor(rand() * (max - min + 1));
const chance = (p: number) => rand() < p;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomId = (length: number, alphabet = ALNUM) =>
  Array.from({ length }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
const digits = (length: number) => randomId(length, '0123456789');
const hexId = (length: number) => randomId(length, '0123456789abcdef');
const guid = () => `${hexId(8)}-${hexId(4)}-4${hexId(3)}-a${hexId(3)}-${hexId(12)}`;
const b64url = (text: string) => Buffer.from(text).toString('base64url');

// ---- benign --------------------------------------------------------------------------------

function link(): string {
  const slug = pick(['Q3-Planning', 'Design-Review', 'Onboarding', 'Budget-2026', 'Retro-Notes', 'Roadmap']);
  return pick([
    () => `https://docs.google.com/document/d/1${randomId(43, `${ALNUM}-_`)}/edit?usp=sharing`,
    () =>
      `https://acme.atlassian.net/wiki/spaces/${pick(['ENG', 'OPS', 'HR', 'FIN'])}/pages/${digits(9)}/${slug.replace(/-/g, '+')}`,
    () => `https://acme.atlassian.net/browse/PLAT-${int(100, 9999)}`,
    () => `https://github.com/acme/${pick(['api', 'web', 'infra', 'mobile'])}/pull/${int(10, 4000)}`,
    () => `https://www.notion.so/acme/${slug}-${hexId(32)}`,
    () => `https://miro.com/app/board/uXjV${randomId(6)}${pick(['I', 'K', 'O'])}=/`,
    () => `https://www.figma.com/file/${randomId(22)}/${slug}?node-id=${int(1, 99)}%3A${int(1, 999)}`,
    () =>
      `https://acme.sharepoint.com/:w:/r/sites/Finance/_layouts/15/Doc.aspx?sourcedoc=%7B${guid().toUpperCase()}%7D&file=${slug}%20v${int(1, 9)}.docx&action=default&mobileredirect=true`,
    () =>
      `https://eur01.safelinks.protection.outlook.com/?url=https%3A%2F%2Fzoom.us%2Fj%2F${digits(11)}&data=05%7C02%7C%7C${hexId(32)}%7C${hexId(32)}%7C0%7C0%7C638${digits(15)}&sdata=${randomId(43)}%3D&reserved=0`,
    () =>
      `https://calendly.com/reschedulings/${guid()}?token=${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(`{"sub":"${guid()}","exp":${digits(10)}}`)}.${randomId(43, `${ALNUM}-_`)}`,
    () => `https://drive.google.com/file/d/1${randomId(32, `${ALNUM}-_`)}/view`,
  ])();
}

function dialIn(): string {
  const zoomId = digits(11);
  const pass = digits(6);
  const spaced = `${zoomId.slice(0, 3)} ${zoomId.slice(3, 7)} ${zoomId.slice(7)}`;
  return pick([
    () =>
      `Join Zoom Meeting\nhttps://us02web.zoom.us/j/${zoomId}?pwd=${randomId(32)}\n\nMeeting ID: ${spaced}\nPasscode: ${pass}\n\n---\n\nOne tap mobile\n+16469313860,,${zoomId}#,,,,*${pass}# US\n+13017158592,,${zoomId}#,,,,*${pass}# US (Washington DC)\n\nDial by your location\n• +49 69 5050 0952 Germany\n• +44 208 080 6591 United Kingdom\n\nFind your local number: https://us02web.zoom.us/u/kd${randomId(8)}`,
    () => {
      const thread = Buffer.from(guid()).toString('base64');
      return `________________________________________________________________________________\nMicrosoft Teams meeting\nJoin on your computer, mobile app or room device\nClick here to join the meeting<https://teams.microsoft.com/l/meetup-join/19%3ameeting_${thread}%40thread.v2/0?context=%7b%22Tid%22%3a%22${guid()}%22%2c%22Oid%22%3a%22${guid()}%22%7d>\nMeeting ID: ${digits(3)} ${digits(3)} ${digits(3)} ${digits(3)}\nPasscode: ${randomId(6)}\nDownload Teams<https://www.microsoft.com/en-us/microsoft-teams/download-app> | Join on the web<https://www.microsoft.com/microsoft-teams/join-a-meeting>\nLearn More<https://aka.ms/JoinTeamsMeeting> | Meeting options<https://teams.microsoft.com/meetingOptions/?organizerId=${guid()}&tenantId=${guid()}&threadId=19_meeting_${thread}@thread.v2&messageId=0&language=en-US>\n________________________________________________________________________________`;
    },
    () => {
      const code = `${randomId(3, 'abcdefghijkmnopqrstuvwxyz')}-${randomId(4, 'abcdefghijkmnopqrstuvwxyz')}-${randomId(3, 'abcdefghijkmnopqrstuvwxyz')}`;
      return `Join with Google Meet: https://meet.google.com/${code}\nOr dial: (US) +1 631-389-${digits(4)} PIN: ${digits(3)} ${digits(3)} ${digits(3)}#\nMore phone numbers: https://tel.meet/${code}?pin=${digits(13)}`;
    },
    () =>
      `Webex: https://acme.webex.com/acme/j.php?MTID=m${hexId(32)}\nMeeting number: ${digits(4)} ${digits(3)} ${digits(4)}\nPassword: ${randomId(11)}\nJoin by phone: +1-415-655-0001 US Toll, access code ${digits(10)}`,
    () => `Dial-in: +1 (415) 555-0${digits(3)}, access code ${digits(4)} ${digits(4)}#`,
  ])();
}

function fill(template: string, lang: string): string {
  const language = LANGUAGES[lang] ?? (LANGUAGES.en as (typeof LANGUAGES)[string]);
  return template
    .replace(/\{topic\}/g, () => fill(pick(language.topics), lang))
    .replace(/\{person2\}/g, () => pick(language.people))
    .replace(/\{person\}/g, () => pick(language.people))
    .replace(/\{company\}/g, () => pick(COMPANIES))
    .replace(/\{n3\}/g, () => String(int(100, 999)))
    .replace(/\{n\}/g, () => String(int(1, 40)))
    .replace(/\{q\}/g, () => String(int(1, 4)))
    .replace(/\{yy\}/g, () => String(int(24, 28)))
    .replace(/\{link\}/g, () => link());
}

function title(lang: string): string {
  const language = LANGUAGES[lang] as (typeof LANGUAGES)[string];
  const text = fill(pick(language.titles), lang);
  return chance(0.2) ? `${text} ${pick(EMOJI)}` : text;
}

function description(lang: string): string {
  const language = LANGUAGES[lang] as (typeof LANGUAGES)[string];
  const parts: string[] = [];
  const lookalikes = LOOKALIKES[lang];
  if (lookalikes && chance(0.3)) {
    parts.push(pick(lookalikes));
  }
  const items = Array.from({ length: int(2, 6) }, () => fill(pick(language.agenda), lang));
  const bullet = pick(['- ', '• ', '* ', 'n. ']);
  parts.push(
    `${language.agendaHead}\n${items.map((item, i) => `${bullet === 'n. ' ? `${i + 1}. ` : bullet}${item}`).join('\n')}`,
  );
  if (chance(lang === 'en' ? 0.15 : 0.05)) {
    parts.push(pick(SNIPPETS));
  }
  parts.push(...Array.from({ length: int(0, 2) }, () => fill(pick(language.closers), lang)));
  if (chance(0.5)) {
    parts.push(dialIn());
  }
  if (chance(0.2)) {
    parts.push(pick(language.places));
  }
  if (chance(0.15)) {
    parts.push(pick(EMOJI).repeat(int(1, 3)));
  }
  return parts.join(pick(['\n\n', '\n']));
}

function location(lang: string): string {
  const language = LANGUAGES[lang] as (typeof LANGUAGES)[string];
  return pick([
    () => pick(language.places),
    () => `${pick(language.places)} / ${link()}`,
    () => `https://us02web.zoom.us/j/${digits(11)}?pwd=${randomId(32)}`,
    () =>
      `https://meet.google.com/${randomId(3, 'abcdefghijk')}-${randomId(4, 'mnopqrstu')}-${randomId(3, 'vwxyzabc')}`,
  ])();
}

function comment(lang: string): string {
  const language = LANGUAGES[lang] as (typeof LANGUAGES)[string];
  return fill(pick(language.comments), lang);
}

const LANGUAGE_WEIGHTS: [string, number][] = [
  ['en', 40],
  ['de', 8],
  ['fr', 7],
  ['es', 6],
  ['pt', 5],
  ['it', 5],
  ['nl', 4],
  ['ja', 5],
  ['zh', 5],
  ['ru', 4],
  ['ko', 2],
  ['ar', 2],
  ['he', 1.5],
  ['hi', 1.5],
  ['pl', 1],
  ['el', 1],
  ['tr', 1],
  ['uk', 1],
];

function weighted(weights: [string, number][]): string {
  const total = weights.reduce((sum, [, w]) => sum + w, 0);
  let r = rand() * total;
  for (const [value, w] of weights) {
    r -= w;
    if (r < 0) {
      return value;
    }
  }
  return weights[0]?.[0] ?? 'en';
}

function benign(): CorpusEntry[] {
  const out: CorpusEntry[] = [];
  const seen = new Set<string>();
  // Every everyday look-alike once on its own, then generated meeting text.
  for (const [lang, texts] of Object.entries(LOOKALIKES)) {
    for (const text of texts) {
      out.push({ id: '', kind: 'lookalike', lang, field: 'summary', text });
      seen.add(text);
    }
  }
  while (out.length < BENIGN_COUNT) {
    const lang = weighted(LANGUAGE_WEIGHTS);
    const field = weighted([
      ['summary', 35],
      ['description', 40],
      ['location', 13],
      ['comment', 12],
    ]);
    const text =
      field === 'summary'
        ? title(lang)
        : field === 'description'
          ? description(lang)
          : field === 'location'
            ? location(lang)
            : comment(lang);
    if (!seen.has(text)) {
      seen.add(text);
      out.push({ id: '', kind: field, lang, field, text });
    }
  }
  return out.map((entry, i) => ({ ...entry, id: `benign-${String(i + 1).padStart(4, '0')}` }));
}

// ---- injections ----------------------------------------------------------------------------

const HOMOGLYPHS: Record<string, string[]> = {
  a: ['а', 'ɑ', 'α'],
  c: ['с', 'ϲ'],
  e: ['е', 'ҽ'],
  g: ['ɡ', 'ց'],
  h: ['һ'],
  i: ['і', 'ı', 'ɪ'],
  j: ['ј'],
  o: ['о', 'ο', 'օ'],
  p: ['р', 'ρ'],
  s: ['ѕ'],
  u: ['υ', 'ս'],
  v: ['ν', 'ѵ'],
  x: ['х'],
  y: ['у'],
  I: ['І', 'Ι'],
  A: ['А', 'Α'],
  E: ['Е', 'Ε'],
  O: ['О', 'Ο'],
  T: ['Т', 'Τ'],
  S: ['Ѕ'],
  N: ['Ν'],
};

const LEET: Record<string, string> = { a: '4', e: '3', i: '1', o: '0', s: '5', t: '7' };

function mapLetters(text: string, map: (c: string, i: number) => string): string {
  return Array.from(text, map).join('');
}

function mathBold(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  if (code >= 0x41 && code <= 0x5a) {
    return String.fromCodePoint(0x1d400 + code - 0x41);
  }
  if (code >= 0x61 && code <= 0x7a) {
    return String.fromCodePoint(0x1d41a + code - 0x61);
  }
  return c;
}

function rot13(text: string): string {
  return text.replace(/[a-z]/gi, (c) => {
    const base = c <= 'Z' ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  });
}

const DISGUISES: [string, (text: string) => string][] = [
  ['homoglyph', (t) => mapLetters(t, (c) => (HOMOGLYPHS[c] && chance(0.5) ? pick(HOMOGLYPHS[c] ?? [c]) : c))],
  ['single-homoglyph', (t) => t.replace(/g/, 'ɡ').replace(/o/, 'о')],
  [
    'fullwidth',
    (t) =>
      mapLetters(t, (c) =>
        c > ' ' && c <= '~' ? String.fromCodePoint((c.codePointAt(0) ?? 0) + 0xfee0) : c,
      ),
  ],
  ['math-bold', (t) => mapLetters(t, mathBold)],
  ['zero-width', (t) => mapLetters(t, (c, i) => (i % 2 === 1 && /\w/.test(c) ? `${c}\u200B` : c))],
  [
    'letter-spaced',
    (t) =>
      t
        .split(' ')
        .map((w) => w.split('').join(' '))
        .join('   '),
  ],
  [
    'dotted',
    (t) =>
      t
        .split(' ')
        .map((w) => w.split('').join('.'))
        .join(' '),
  ],
  [
    'split-words',
    (t) =>
      t
        .split(' ')
        .map((w) => (w.length > 5 ? `${w.slice(0, 3)}${pick([' ', '-', ' '])}${w.slice(3)}` : w))
        .join(' '),
  ],
  ['leetspeak', (t) => mapLetters(t, (c) => LEET[c.toLowerCase()] ?? c)],
  ['random-case', (t) => mapLetters(t, (c) => (chance(0.5) ? c.toUpperCase() : c.toLowerCase()))],
  ['base64', (t) => `Reference data for the meeting: ${Buffer.from(t).toString('base64')}`],
  ['hex', (t) => `Room code ${Buffer.from(t).toString('hex')}`],
  [
    'percent',
    (t) =>
      `https://example.com/agenda?note=${[...Buffer.from(t)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')}`,
  ],
  ['rot13', (t) => rot13(t)],
  ['html', (t) => `<p>${t.replace(/(\w{3})(\w)/, '$1<b></b>$2')}</p>`],
  [
    'markdown',
    (t) =>
      t
        .split(' ')
        .map((w, i) => (i % 2 === 0 ? `**${w}**` : `_${w}_`))
        .join('\n'),
  ],
  [
    'buried',
    (t) =>
      `Quarterly business review with ${pick(COMPANIES)}\n\nAgenda:\n1. Wins and metrics\n2. Roadmap preview\n3. ${t}\n4. Renewal timeline\n\n${dialIn()}`,
  ],
];

function injections(): CorpusEntry[] {
  const out: CorpusEntry[] = PAYLOADS.map((payload) => ({
    id: '',
    kind: payload.category,
    lang: payload.lang,
    field: pick(['summary', 'description', 'description', 'location', 'comment']),
    text: payload.text,
  }));
  for (const text of DISGUISED) {
    for (const [name, disguise] of DISGUISES) {
      out.push({ id: '', kind: `disguised:${name}`, lang: 'en', field: 'description', text: disguise(text) });
    }
  }
  return out.map((entry, i) => ({ ...entry, id: `inj-${String(i + 1).padStart(4, '0')}` }));
}

function jsonl(entries: CorpusEntry[]): string {
  return `${entries.map((entry) => JSON.stringify(entry)).join('\n')}\n`;
}

const injectionEntries = injections();
const benignEntries = benign();
writeFileSync(new URL('./injections.jsonl', import.meta.url), jsonl(injectionEntries));
writeFileSync(new URL('./benign.jsonl', import.meta.url), jsonl(benignEntries));
console.log(
  `injections.jsonl: ${injectionEntries.length} payloads; benign.jsonl: ${benignEntries.length} texts`,
);
