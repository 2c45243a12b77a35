// Names a typo was likely meant to be: for the fix a message offers (an unknown NodePool name, say).

/** The names of `known` at most two edits from `name` (a typo's likely target), nearest first, then by name. */
export function nearNames(name: string, known: readonly string[]): string[] {
  return known
    .map((k) => ({ k, d: editDistance(name, k) }))
    .filter((x) => x.d <= 2)
    .sort((a, b) => a.d - b.d || a.k.localeCompare(b.k))
    .map((x) => x.k);
}

/** Levenshtein distance: insertions, deletions and substitutions of one character. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (cur[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
