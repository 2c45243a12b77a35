/**
 * metav1.MicroTime, as Leases and events.k8s.io Events require: RFC 3339 with exactly six fractional digits
 * (toISOString always ends in three and a Z; a Lease renewal writes two of these every 2 s).
 */
export const microTime = (ms: number): string => `${new Date(ms).toISOString().slice(0, -1)}000Z`;
