// Names a typo was likely meant to be: for the fix a message offers (an unknown NodePool name, say).

/** The names of `known` at most two edits from `name` (a typo's likely target), nearest first, then by name. */
export function nearNames(name: string, known: readonly string[]): string[] {
  return known
    .map((k) => ({ k, d: editDistance(name, k) }))
    .filter((x) => x.d <= 2)
    .sort((a, b) => a.d - b.d || a.k.localeCompare(b.k))
    .map((x) => x.k);
}

/**
 * The values of a closed set (an enum) a wrong value was likely meant to be: the one that differs only in case
 * ("wed" → "Wed"), else those it begins with ("Wednesday" → "Wed") or is at most two edits from case aside
 * ("sruge" → "surge"), the nearest only (in the set's order); never as many edits as the value has characters.
 */
export function nearValues(found: string, allowed: readonly string[]): string[] {
  const lower = found.toLowerCase();
  const same = allowed.filter((v) => v.toLowerCase() === lower);
  if (same.length > 0) return same;
  const near = allowed
    .map((v) => {
      const l = v.toLowerCase();
      return { v, d: l.length >= 3 && lower.startsWith(l) ? 1 : editDistance(lower, l) };
    })
    .filter((x) => x.d <= 2 && x.d < lower.length);
  const best = Math.min(...near.map((x) => x.d));
  return near.filter((x) => x.d === best).map((x) => x.v);
}

/** " (did you mean "a" or "b"?)" for the near values, nothing without one. */
export const didYouMean = (near: readonly string[]): string =>
  near.length === 0 ? '' : ` (did you mean ${near.map((n) => JSON.stringify(n)).join(' or ')}?)`;

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
