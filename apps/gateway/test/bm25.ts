/**
 * A plain Okapi BM25 ranking (k1 = 1.2, b = 0.75, the usual idf with +1 so it stays positive),
 * as a description search over tools would rank them. Words are lower-cased runs of letters and
 * digits, snake_case names split into words; a trailing plural "s" is dropped so "meetings"
 * finds "meeting"; a few function words are ignored. Nothing else: no synonyms, no stemming
 * beyond that, so a description is found by the words a person uses.
 */

const STOP_WORDS = new Set(
  'a an and are as at be by can do for from how i in is it its me my of on or so that the their them then there these this to was we what when where which who will with you your'.split(
    ' ',
  ),
);

export function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .map((word) => (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word))
    .filter((word) => !STOP_WORDS.has(word));
}

export interface Ranked {
  id: string;
  score: number;
}

/** The documents ranked against the query, best first (ties keep the documents' order). */
export function rankBm25(documents: readonly { id: string; text: string }[], query: string): Ranked[] {
  const k1 = 1.2;
  const b = 0.75;
  const bags = documents.map((document) => words(document.text));
  const averageLength = bags.reduce((sum, bag) => sum + bag.length, 0) / Math.max(bags.length, 1);
  const documentFrequency = new Map<string, number>();
  for (const bag of bags) {
    for (const word of new Set(bag)) {
      documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
    }
  }
  const terms = [...new Set(words(query))];
  const ranked = documents.map((document, index) => {
    const bag = bags[index] ?? [];
    let score = 0;
    for (const term of terms) {
      const frequency = bag.filter((word) => word === term).length;
      if (frequency === 0) {
        continue;
      }
      const n = documentFrequency.get(term) ?? 0;
      const idf = Math.log(1 + (documents.length - n + 0.5) / (n + 0.5));
      score += (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * bag.length) / averageLength));
    }
    return { id: document.id, score };
  });
  return ranked.sort((left, right) => right.score - left.score);
}
