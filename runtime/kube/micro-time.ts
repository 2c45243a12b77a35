/** metav1.MicroTime, as Leases and events.k8s.io Events require: RFC 3339 with exactly six fractional digits. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
