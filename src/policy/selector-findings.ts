// SelectorMatchesNothing: a RotationPolicy's or a plan rule's nodePoolSelector that matches none of the NodePools
// read. A misspelt label (`team: paymnets`) is as silent as a misspelt name in nodePools (UnknownNodePool): the
// pool it was meant for keeps other settings, or none. The message names the term no NodePool satisfies and the
// label values (or keys) at most two edits from it; the fix is that one value when it is the only one near and
// makes the selector match. A plan's own selector that matches nothing is NoGovernedNodePools (src/explain), which
// says why through the same whyNothingMatches.
import { finding, type Finding, type Fix } from '../derivation/findings.js';
import type { LabelSelector } from '../generated/api-types.js';
import type { NodePool } from '../karpenter/types.js';
import { didYouMean, editDistance, nearNames } from '../util/near-names.js';
import { count } from '../util/plural.js';
import { setPath } from '../util/set-path.js';
import { matches } from './selector.js';

/** One term of a selector no NodePool satisfies, where it is, and what it was likely meant to say. */
interface Miss {
  /** The term's path below the selector, as a fix path would write it (matchLabels.team, matchExpressions[0]…). */
  at: string;
  /** What is wrong, in words. */
  text: string;
  /** The near values (or keys) for the did-you-mean. */
  near: string[];
  /** The fix's path below the selector and the value it sets, when a value (not a key) is near. */
  fix?: { at: string; value: string };
}

/**
 * The names nearest `name`, at most two edits away and fewer edits than it has characters ("a" is not near "b"):
 * "tem" is one edit from "team" and two from "tier", and means "team".
 */
function near(name: string, known: Iterable<string>): string[] {
  const scored = nearNames(name, [...new Set(known)])
    .map((k) => ({ k, d: editDistance(name, k) }))
    .filter((x) => x.d < name.length);
  return scored.filter((x) => x.d === scored[0]?.d).map((x) => x.k);
}

/** A key as a path segment: plain when it is an identifier, else bracketed and quoted (no fix is offered then). */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const keyPath = (key: string): string => (IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);

function valuesOf(pools: readonly NodePool[], key: string): string[] {
  return pools.flatMap((p) => {
    const v = p.metadata.labels?.[key];
    return v === undefined ? [] : [v];
  });
}

const keysOf = (pools: readonly NodePool[]): string[] => pools.flatMap((p) => Object.keys(p.metadata.labels ?? {}));

/** A key no NodePool has. */
function missingKey(at: string, key: string, pools: readonly NodePool[]): Miss {
  return { at, text: `no NodePool has the label ${JSON.stringify(key)}`, near: near(key, keysOf(pools)) };
}

/** The terms no NodePool satisfies on its own (a key none has, a value none has for that key). */
function misses(selector: LabelSelector, pools: readonly NodePool[]): Miss[] {
  const out: Miss[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const at = `matchLabels${keyPath(key)}`;
    const values = valuesOf(pools, key);
    if (values.length === 0) out.push(missingKey(at, key, pools));
    else if (!values.includes(value)) {
      const meant = near(value, values);
      out.push({
        at,
        text: `no NodePool has ${key}=${value}`,
        near: meant,
        ...(meant.length === 1 && IDENTIFIER.test(key) ? { fix: { at, value: meant[0] as string } } : {}),
      });
    }
  }
  (selector.matchExpressions ?? []).forEach((expr, i) => {
    const at = `matchExpressions[${i}]`;
    if (expr.operator !== 'In' && expr.operator !== 'Exists') return;
    const values = valuesOf(pools, expr.key);
    if (values.length === 0) return void out.push(missingKey(`${at}.key`, expr.key, pools));
    if (expr.operator !== 'In' || (expr.values ?? []).some((v) => values.includes(v))) return;
    const list = expr.values ?? [];
    const meant = list.map((v) => near(v, values));
    const one = list.length === 1 && meant[0]?.length === 1 ? (meant[0][0] as string) : undefined;
    out.push({
      at: `${at}.values`,
      text: `no NodePool has ${expr.key} in ${JSON.stringify(list)}`,
      near: [...new Set(meant.flat())],
      ...(one !== undefined ? { fix: { at: `${at}.values[0]`, value: one } } : {}),
    });
  });
  return out;
}

export interface SelectorTarget {
  /** The selector, and its path in the object (spec.nodePoolSelector, spec.rules[2].nodePoolSelector). */
  selector: LabelSelector;
  path: string;
  /** Who it belongs to, in the message: "the policy", "rule api-strict". */
  owner: string;
  kind: 'RotationPolicy' | 'MaintenancePlan';
  /** What matching nothing means, a clause: "the policy governs no NodePool", "it excludes no NodePool". */
  effect: string;
}

/**
 * SelectorMatchesNothing when `selector` matches none of `pools` (those the owner can reach: a plan's rule only
 * those the plan's own selector selects; `others` are the rest, for the message). Nothing without NodePools
 * (a plan that selects none is NoGovernedNodePools).
 */
export function selectorFindings(
  t: SelectorTarget,
  pools: readonly NodePool[],
  others: readonly NodePool[] = [],
): Finding[] {
  if (pools.length === 0) return [];
  if (pools.some((p) => matches(t.selector, p.metadata.labels))) return [];
  const outside = others.filter((p) => matches(t.selector, p.metadata.labels)).map((p) => p.metadata.name);
  const among = `${count(pools.length, 'NodePool')} ${others.length > 0 ? 'the plan selects' : 'given'}`;
  const head = `${t.owner}'s ${t.path} matches none of the ${among}`;
  if (outside.length > 0)
    return [
      finding(
        'SelectorMatchesNothing',
        t.path,
        `${head}, so ${t.effect}: it matches only ${outside.join(', ')}, which spec.nodePoolSelector leaves out. ` +
          'Widen spec.nodePoolSelector or fix the selector.',
      ),
    ];
  const miss = whyNothingMatches(t, pools);
  const advice = miss.fix
    ? `Set ${miss.fix.path} to ${String(miss.fix.value)}, or fix the selector otherwise.`
    : 'Fix the selector.';
  return [finding('SelectorMatchesNothing', miss.field, `${head}: ${miss.why}, so ${t.effect}. ${advice}`, miss.fix)];
}

/** Why a selector matches none of `pools`, in words; the field to name; the fix when one value cures it. */
export interface NoMatch {
  why: string;
  field: string;
  fix?: Fix;
}

/**
 * Why `t.selector` matches none of `pools` (which the caller has checked): the terms no NodePool satisfies, each
 * with the label values or keys near it, and the fix when a single near value makes the selector match.
 */
export function whyNothingMatches(
  t: Pick<SelectorTarget, 'selector' | 'path' | 'kind'>,
  pools: readonly NodePool[],
): NoMatch {
  const found = misses(t.selector, pools);
  const words = found.map((m) => `${found.length > 1 ? `${m.at}: ` : ''}${m.text}${didYouMean(m.near)}`);
  const why = words.length > 0 ? words.join('; ') : 'each term matches some NodePool, but none has them all';
  const only = found.length === 1 ? found[0] : undefined;
  const field = only ? `${t.path}.${only.at}` : t.path;
  if (!only?.fix) return { why, field };
  const fix: Fix = { object: t.kind, path: `${t.path}.${only.fix.at}`, value: only.fix.value };
  // Offered only when it cures the selector: setting the one value makes it match a NodePool.
  const cured = setPath({ s: t.selector }, `s.${only.fix.at}`, only.fix.value).s;
  return pools.some((p) => matches(cured, p.metadata.labels)) ? { why, field, fix } : { why, field };
}
