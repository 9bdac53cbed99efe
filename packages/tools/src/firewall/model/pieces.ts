// Feature assembly and scoring shape of the classifier.
// Features of a text: hashed character n-grams of the text and of its decodings, plus counts of the
// 16 lexicon concepts and the 120 "both concepts present" conjunctions, counted on the text and on
// the firewall's folded variants and decodings (which undo look-alike letters, spacing, leetspeak
// and base64/hex/ROT13).
// Score of a text: a text of at most WINDOW characters is scored whole; a longer one as the maximum
// over its windows (sentences packed up to WINDOW characters, one sentence overlapping); a text over
// MAX_CHUNK characters is first cut into chunks overlapping by CHUNK_OVERLAP.
import { decodings } from '../decode.ts';
import { foldedVariants } from '../normalize.ts';
import {
  DEFAULT_FEATURES,
  DIM,
  type FeatureOptions,
  featuriseNormalised,
  normalise,
  type Sparse,
} from './features.ts';
import { CONCEPT_COUNT, conceptCounts } from './lexicon.ts';

export const NCONCEPT = CONCEPT_COUNT;
export const NPAIR = (NCONCEPT * (NCONCEPT - 1)) / 2;
/** First slot of the concepts counted inside quotation marks. */
export const QUOTED_AT = DIM + NCONCEPT + NPAIR;
export const TOTAL_DIM = QUOTED_AT + NCONCEPT;

export const WINDOW = 300;
export const MAX_CHUNK = 2048;
export const CHUNK_OVERLAP = 256;

export interface ModelOptions {
  ngrams: boolean;
  concepts: boolean;
  features: FeatureOptions;
  /** Window size in characters (0 = whole text only). */
  window: number;
  /** Also count concepts on folded variants and n-grams on decodings. */
  views: boolean;
  /** Also count concepts inside quotation marks on their own (a text that quotes a payload). */
  quotes: boolean;
  /** Also hash the n-grams inside quotation marks apart from the others. */
  quotedNgrams: boolean;
}
export const DEFAULT_MODEL: ModelOptions = {
  ngrams: true,
  concepts: true,
  features: DEFAULT_FEATURES,
  window: WINDOW,
  views: true,
  quotes: true,
  quotedNgrams: false,
};

// A span between quotation marks, at most 300 characters on one line. ASCII double quotes count
// unless the span is a JSON key or value (a colon next to it).
const QUOTED = /(?<![:]\s*)"([^"\n]{2,300})"(?!\s*:)|[“„«»「『‹]([^“”„«»「」『』‹›\n]{2,300})[”“»«」』›]/gu;

/** The text between quotation marks in `text`, joined by newlines. */
export function quotedSpans(text: string): string {
  const out: string[] = [];
  for (const m of text.matchAll(QUOTED)) {
    out.push(m[1] ?? m[2] ?? '');
  }
  return out.join('\n');
}

/** Concepts counted inside quotation marks, as sparse features after the pair slots. */
export function quotedSparse(text: string): Sparse {
  const quoted = quotedSpans(text);
  const idx: number[] = [];
  const val: number[] = [];
  if (quoted !== '') {
    conceptCounts(normalise(quoted)).forEach((v, i) => {
      if (v > 0) {
        idx.push(QUOTED_AT + i);
        val.push(Math.log1p(v));
      }
    });
  }
  return { idx: Int32Array.from(idx), val: Float32Array.from(val) };
}

/** Concept counts (maximum over the text and its views) and pair conjunctions, as sparse features. */
export function conceptSparse(text: string, extra: string[] = []): Sparse {
  return conceptSparseNormalised(normalise(text), extra.map(normalise));
}

/** `conceptSparse` of texts already normalised. */
function conceptSparseNormalised(text: string, extra: string[]): Sparse {
  const c = conceptCounts(text);
  // A view identical to the text or to an earlier view (most plain text folds to itself) adds nothing.
  const seen = new Set([text]);
  for (const v of extra) {
    if (seen.has(v)) {
      continue;
    }
    seen.add(v);
    conceptCounts(v).forEach((x, i) => {
      if (x > (c[i] ?? 0)) {
        c[i] = x;
      }
    });
  }
  const idx: number[] = [];
  const val: number[] = [];
  c.forEach((v, i) => {
    if (v > 0) {
      idx.push(DIM + i);
      val.push(Math.log1p(v));
    }
  });
  let p = 0;
  for (let i = 0; i < NCONCEPT; i++) {
    for (let j = i + 1; j < NCONCEPT; j++, p++) {
      if ((c[i] ?? 0) > 0 && (c[j] ?? 0) > 0) {
        idx.push(DIM + NCONCEPT + p);
        val.push(1);
      }
    }
  }
  return { idx: Int32Array.from(idx), val: Float32Array.from(val) };
}

/** The sparse feature vector of one text (a whole short text, or one window). */
export function features(text: string, o: ModelOptions = DEFAULT_MODEL): Sparse {
  const parts: Sparse[] = [];
  let extra: string[] = [];
  let decoded: string[] = [];
  if (o.views) {
    const folded = foldedVariants(text);
    extra = folded.map((x) => x.text);
    decoded = decodings(text, folded[0]?.text ?? '').map((d) => d.text);
    extra.push(...decoded);
  }
  // Each text is normalised once: the n-grams and the concepts share it.
  const norm = normalise(text);
  const decodedNorm = decoded.map(normalise);
  if (o.ngrams) {
    const quoted = o.quotedNgrams ? quotedSpans(text) : '';
    parts.push(featuriseNormalised(norm, o.features, decodedNorm, quoted === '' ? '' : normalise(quoted)));
  }
  if (o.concepts) {
    const foldedNorm = extra.slice(0, extra.length - decoded.length).map(normalise);
    parts.push(conceptSparseNormalised(norm, [...foldedNorm, ...decodedNorm]));
    if (o.quotes) {
      parts.push(quotedSparse(text));
    }
  }
  const n = parts.reduce((a, p) => a + p.idx.length, 0);
  const idx = new Int32Array(n);
  const val = new Float32Array(n);
  let k = 0;
  for (const p of parts) {
    idx.set(p.idx, k);
    val.set(p.val, k);
    k += p.idx.length;
  }
  return { idx, val };
}

const SENTENCE_END = /(?<=[.!?。！？\n;:])\s*/u;

/**
 * Windows of a text longer than `size`: consecutive sentences packed up to `size` characters, each
 * window starting at the last sentence of the one before. A sentence longer than `size` is cut
 * into pieces overlapping by half. Empty for a text of at most `size` characters.
 */
export function windows(text: string, size: number): string[] {
  if (size <= 0 || text.length <= size) {
    return [];
  }
  const sentences = text.split(SENTENCE_END).filter((s) => s.trim() !== '');
  const out: string[] = [];
  for (let i = 0; i < sentences.length; i++) {
    let w = sentences[i] ?? '';
    let j = i + 1;
    while (j < sentences.length && w.length + (sentences[j] ?? '').length <= size) {
      w += ` ${sentences[j] ?? ''}`;
      j++;
    }
    if (w.length > size) {
      for (let s = 0; s < w.length; s += size >> 1) {
        out.push(w.slice(s, s + size));
      }
    } else {
      out.push(w);
    }
    if (j >= sentences.length) {
      break;
    }
    i = Math.max(i, j - 2);
  }
  return out;
}

/** The pieces a text is scored on: itself if short, else its windows, chunk by chunk. */
export function pieces(text: string, window: number = WINDOW): string[] {
  const chunks: string[] = [];
  if (text.length <= MAX_CHUNK) {
    chunks.push(text);
  } else {
    for (let i = 0; i < text.length; i += MAX_CHUNK - CHUNK_OVERLAP) {
      chunks.push(text.slice(i, i + MAX_CHUNK));
    }
  }
  const out: string[] = [];
  for (const chunk of chunks) {
    const ws = windows(chunk, window);
    out.push(...(ws.length === 0 ? [chunk] : ws));
  }
  return out;
}

/** The highest-scoring piece of a text and its score. */
export function bestPiece(
  text: string,
  scorePiece: (piece: string) => number,
  window = WINDOW,
): { score: number; piece: string } {
  let best = { score: Number.NEGATIVE_INFINITY, piece: text };
  for (const piece of pieces(text, window)) {
    const score = scorePiece(piece);
    if (score > best.score) {
      best = { score, piece };
    }
  }
  return best;
}

/** Score of a text: the maximum of `scorePiece` over its pieces. */
export function maxOverPieces(text: string, scorePiece: (piece: string) => number, window = WINDOW): number {
  return bestPiece(text, scorePiece, window).score;
}
