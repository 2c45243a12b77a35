// Ordering of resourceVersions (KEP-5504, "Comparable Resource Version", stable in Kubernetes 1.35; client-go's
// k8s.io/apimachinery/pkg/util/resourceversion.CompareResourceVersion): for objects of one resource, a
// resourceVersion is a positive decimal integer without leading zeros, and a larger one is later. Anything else
// (an apiserver on another storage, an older server's opaque string) is not comparable: null, and the caller
// must not draw a conclusion from it.

const CANONICAL = /^[1-9][0-9]*$/;

/** -1, 0 or 1 as `a` is earlier than, the same as or later than `b`; null when either is not comparable. */
export function compareResourceVersion(a: string, b: string): -1 | 0 | 1 | null {
  if (!CANONICAL.test(a) || !CANONICAL.test(b)) return null;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
