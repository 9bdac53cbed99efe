/** "Did you mean" for misspelt or borrowed property names and enumerated values. */

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  if (a === b) {
    return 0;
  }
  const m = a.length;
  const n = b.length;
  let prevPrev = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let row = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= m; i++) {
    row[0] = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (prevPrev[j - 2] as number) + 1);
      }
      row[j] = best;
    }
    [prevPrev, prev, row] = [prev, row, prevPrev];
  }
  return prev[n] as number;
}

const squash = (text: string) => text.toLowerCase().replace(/[\s_.-]+/g, '');

/**
 * The candidate closest to `input` (case, spaces, '-', '_' and '.' ignored), if it is close
 * enough to be a plausible typo; `aliases` maps other systems' words to a candidate first.
 */
export function closest(
  input: string,
  candidates: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string | undefined {
  const key = squash(input);
  if (key === '') {
    return undefined;
  }
  const alias = Object.hasOwn(aliases, key) ? aliases[key] : undefined;
  if (alias !== undefined) {
    return alias;
  }
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const target = squash(candidate);
    if (target === key) {
      return candidate;
    }
    const distance = target.startsWith(key) && key.length >= 3 ? 0.5 : editDistance(key, target);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const limit = Math.max(1, Math.min(3, Math.floor(key.length / 3)));
  return bestDistance <= limit ? best : undefined;
}
