// Label selectors over NodePool labels, and their specificity (design §5.4, compatible with the reference:
// the number of matchLabels plus matchExpressions entries; an empty selector scores 0).
import type { LabelSelector } from '../generated/api-types.js';

export function matches(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>> = {}): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expr of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, expr.key);
    const value = labels[expr.key];
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
        if (!has || !values.includes(value as string)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(value as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

export function specificity(selector: LabelSelector | undefined): number {
  if (!selector) return 0;
  return Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length;
}
