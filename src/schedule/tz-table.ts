// A zone's UTC offsets over a span of years, in the compact text form src/generated/tz-offsets.ts holds, and the
// offset at an instant read from it (a binary search over the zone's transitions). The tables are Go's own
// arithmetic over Go's tz database (scripts/tzdata), so an offset here is the one the reference controller
// computes; and reading them costs neither ICU's data nor Intl's formatter (8 MiB of resident memory in a
// process that otherwise never formats a date: docs/benchmarks.md).
//
// The text: the zone's distinct offsets in seconds, base 36 with a sign where negative, comma-separated, the
// first being the offset at the span's start; a semicolon; then each transition as its distance in seconds from
// the previous one (the first: from the Unix epoch), base 36, followed by one capital letter, the index of the
// offset in force from then on (A = the first).

/** A zone's offsets, decoded: transitions[i] (epoch ms) starts offsets[i + 1] (seconds); offsets[0] before. */
export interface OffsetTable {
  transitions: Float64Array;
  offsets: Int32Array;
}

const INDEX_BASE = 'A'.charCodeAt(0);

/** The text form of [initial offset, t1, offset1, t2, offset2, …] (Unix seconds, offsets in seconds). */
export function encodeOffsets(row: readonly number[]): string {
  const [initial, ...pairs] = row;
  if (initial === undefined || pairs.length % 2 !== 0) throw new Error(`not an offset row: ${JSON.stringify(row)}`);
  const palette = [initial];
  let text = '';
  let previous = 0;
  for (let i = 0; i < pairs.length; i += 2) {
    const [at, offset] = [pairs[i] as number, pairs[i + 1] as number];
    if (at <= previous && i > 0) throw new Error(`transitions out of order at ${at}`);
    if (at < 0) throw new Error(`a transition before the epoch: ${at}`);
    let index = palette.indexOf(offset);
    if (index < 0) index = palette.push(offset) - 1;
    if (index >= 26) throw new Error('more than 26 distinct offsets in one zone');
    text += (at - previous).toString(36) + String.fromCharCode(INDEX_BASE + index);
    previous = at;
  }
  return `${palette.map((o) => o.toString(36)).join(',')};${text}`;
}

/** The table of a text made by encodeOffsets. */
export function decodeOffsets(text: string): OffsetTable {
  const [head = '', body = ''] = text.split(';');
  const palette = head.split(',').map((p) => parseInt(p, 36));
  const transitions: number[] = [];
  const offsets: number[] = [palette[0] as number];
  let at = 0;
  let digits = '';
  for (const ch of body) {
    const code = ch.charCodeAt(0);
    if (code >= INDEX_BASE && code < INDEX_BASE + 26) {
      at += parseInt(digits, 36);
      transitions.push(at * 1000);
      offsets.push(palette[code - INDEX_BASE] as number);
      digits = '';
    } else digits += ch;
  }
  return { transitions: Float64Array.from(transitions), offsets: Int32Array.from(offsets) };
}

/** The offset in seconds in force at `epochMs` (a transition's own instant has the new offset). */
export function offsetAt(table: OffsetTable, epochMs: number): number {
  const { transitions, offsets } = table;
  let [lo, hi] = [0, transitions.length]; // the number of transitions at or before epochMs lies in [lo, hi]
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((transitions[mid] as number) <= epochMs) lo = mid + 1;
    else hi = mid;
  }
  return offsets[lo] as number;
}
