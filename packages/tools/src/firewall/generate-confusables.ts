// Writes confusables.ts, the table the firewall folds look-alike characters with before matching:
// every character of the Latin, IPA, Greek, Cyrillic, Armenian, Cherokee, Coptic, letterlike,
// enclosed, fullwidth and mathematical alphanumeric blocks that reads as ASCII letters or digits,
// with those letters. Offline and deterministic: Node's ICU (NFKD) does the compatibility forms,
// the two tables below the cross-script look-alikes. Run: node packages/tools/src/firewall/generate-confusables.ts
import { writeFileSync } from 'node:fs';

/**
 * Unicode TR39 confusables (confusables.txt as shipped in ICU 72, Unicode 15) from these scripts
 * whose prototype is a single ASCII letter or digit: pairs of a character and what it reads as.
 * Prototypes are folded to lower case; an upper-case character maps to the capital it mimics
 * (Greek Ν → n, ν → v).
 */
const TR39 =
  'ıi ƍg Ɩi Ʀr Ƨ2 Ʒ3 Ƽ5 ƽs ǀl Ȝ3 Ȣ8 ȣ8 ɑa ɡg ɣy ɩi ɪi ɯw ʋu ʏy Ϳj Αa Βb Εe Ζz Ηh Ιi Κk Μm Νn Οo Ρp Τt Υy Χx αa γy ιi νv οo ρp σo υu ϒy Ϝf Ϩ2 ϱp ϲc ϳj Ϲc Ϻm Ѕs Іi Јj Аa Вb Еe З3 Кk Мm Нh Оo Рp Сc Тt Уy Хx аa б6 гr еe оo рp сc уy хx ѕs іi јj ѡw Ѵv ѵv Үy үy һh ҽe Ӏi ӏi Ӡ3 ԁd Ԍg ԛq Ԝw ԝw Սu Տs Օo աw գq զq հh ոn ռn սu ցg քf օo Ꭰd Ꭱr Ꭲt Ꭹy Ꭺa Ꭻj Ꭼe Ꮃw Ꮇm Ꮋh Ꮍy Ꮐg Ꮓz Ꮞ4 Ꮢr Ꮤw Ꮥs Ꮩv Ꮪs Ꮮl Ꮯc Ꮲp Ꮶk Ꮾ6 Ᏻg Ᏼb ᴄc ᴏo ᴑo ᴜu ᴠv ᴡw ᴢz ᴦr ᶃg ᶌy ẝf ỿy ιi ℽy ⲅr Ⲏh Ⲓi Ⲕk Ⲙm Ⲛn Ⲟo ⲟo Ⲣp ⲣp Ⲥc ⲥc Ⲧt Ⲩy Ⲭx Ⳋ9 Ⳍ3 Ⳑl Ⳓ6 Ꙅ2 ꙇi ꜱs Ꝛ2 Ꝫ3 Ꝯ9 Ꞙf ꞙf ꞟu Ɜ3 Ʝj Ꭓx Ꞵb ꬲe ꬵf ꬽo ꭇr ꭈr ꭎu ꭒu ꭚy ꭵi ꮁr ꮃw ꮓz ꮩv ꮪs ꮯc';

/**
 * Look-alikes TR39 leaves out that injection payloads use: lower-case forms of letters whose
 * capitals are confusable (в for b in lower-case text), small capitals and common Greek and
 * Cyrillic stand-ins.
 */
const EXTRA =
  'вb кk мm нh тt пn иu шw ѳo ʙb ʜh ʟl ɴn ʀr ɢg ᴀa ᴅd ᴇe ᴊj ᴋk ᴍm ᴘp ᴛt ꜰf ǫq ηn κk τt μu ωw εe βb χx ϲc ϳj ςc';

/** Blocks folded, first and last code point. */
const BLOCKS: [number, number][] = [
  [0x00c0, 0x024f], // Latin-1 letters, Latin Extended-A and -B
  [0x0250, 0x02ff], // IPA, spacing modifier letters
  [0x0370, 0x03ff], // Greek
  [0x0400, 0x052f], // Cyrillic and its supplement
  [0x0530, 0x058f], // Armenian
  [0x13a0, 0x13ff], // Cherokee
  [0x1d00, 0x1dbf], // phonetic extensions
  [0x1e00, 0x1fff], // Latin Extended Additional, Greek Extended
  [0x2070, 0x209f], // superscripts and subscripts
  [0x2100, 0x218f], // letterlike symbols, number forms
  [0x2460, 0x24ff], // enclosed alphanumerics
  [0x2c60, 0x2cff], // Latin Extended-C, Coptic
  [0xa640, 0xa69f], // Cyrillic Extended-B
  [0xa720, 0xa7ff], // Latin Extended-D
  [0xab30, 0xabbf], // Latin Extended-E, Cherokee supplement
  [0xff00, 0xffef], // fullwidth forms
  [0x1d400, 0x1d7ff], // mathematical alphanumerics
  [0x1f100, 0x1f1ff], // enclosed alphanumeric supplement
];

function pairs(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const pair of text.split(' ')) {
    const [key, ...value] = Array.from(pair);
    if (key !== undefined) {
      map.set(key, value.join(''));
    }
  }
  return map;
}

const cross = new Map([...pairs(EXTRA), ...pairs(TR39)]);

/** Letters with no decomposition that are drawn as a boxed or circled capital (🅰, 🅐, 🇦). */
function boxedLetter(cp: number): string | undefined {
  for (const first of [0x1f150, 0x1f170, 0x1f1e6]) {
    if (cp >= first && cp < first + 26) {
      return String.fromCharCode(0x61 + cp - first);
    }
  }
  return undefined;
}

function fold(cp: number): string | undefined {
  const char = String.fromCodePoint(cp);
  const direct = cross.get(char) ?? boxedLetter(cp);
  if (direct !== undefined) {
    return direct;
  }
  const parts = Array.from(char.normalize('NFKD').replace(/\p{M}/gu, ''), (c) => cross.get(c) ?? c);
  const folded = parts.join('').toLowerCase().replace(/[().]/g, '');
  return /^[a-z0-9]{1,4}$/.test(folded) ? folded : undefined;
}

const inBlocks = (cp: number) => BLOCKS.some(([first, last]) => cp >= first && cp <= last);
const table = new Map<number, string>();
for (const [first, last] of BLOCKS) {
  for (let cp = first; cp <= last; cp++) {
    const folded = fold(cp);
    if (folded !== undefined && /\p{L}|\p{N}|\p{So}/u.test(String.fromCodePoint(cp))) {
      table.set(cp, folded);
    }
  }
}
// A letter folds the same in either case when only one case is listed (Cyrillic З and з → 3),
// so text matches lower-case patterns however it is capitalised.
for (const [cp, folded] of [...table]) {
  const char = String.fromCodePoint(cp);
  for (const other of [char.toLowerCase(), char.toUpperCase()]) {
    const otherCp = other.codePointAt(0) ?? 0;
    if (
      Array.from(other).length === 1 &&
      otherCp !== cp &&
      otherCp >= 0x80 &&
      inBlocks(otherCp) &&
      !table.has(otherCp)
    ) {
      table.set(otherCp, folded);
    }
  }
}

const lines: string[] = [];
for (const [first, last] of BLOCKS) {
  let line = '';
  for (let cp = first; cp <= last; cp++) {
    const folded = table.get(cp);
    if (folded === undefined) {
      continue;
    }
    line += String.fromCodePoint(cp) + folded;
    if (line.length >= 90) {
      lines.push(line);
      line = '';
    }
  }
  if (line !== '') {
    lines.push(line);
  }
}

const source = `// Generated by generate-confusables.ts (Node ${process.version}, ICU ${process.versions.icu}); do not edit.

/**
 * Characters that read as ASCII letters or digits, each followed by them (lower case): the
 * look-alike skeletons of Unicode TR39 for Latin, IPA, Greek, Cyrillic, Armenian, Cherokee and
 * Coptic, and the NFKD forms of fullwidth, letterlike, enclosed and mathematical alphanumerics.
 */
const PAIRS = [
${lines.map((line) => `  '${line}',`).join('\n')}
].join('');

function parse(pairs: string): Map<number, string> {
  const map = new Map<number, string>();
  let key = 0;
  for (const char of pairs) {
    const cp = char.codePointAt(0) ?? 0;
    if (cp >= 0x80) {
      key = cp;
      map.set(key, '');
    } else {
      map.set(key, \`\${map.get(key) ?? ''}\${char}\`);
    }
  }
  return map;
}

/** Code point → the ASCII letters or digits it reads as. */
export const CONFUSABLES: ReadonlyMap<number, string> = parse(PAIRS);
`;

writeFileSync(new URL('./confusables.ts', import.meta.url), source);
console.log(`confusables.ts: ${lines.join('').length} characters in ${lines.length} lines`);
