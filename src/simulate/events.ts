// The model of Karpenter, one handler per event kind. Each returns whether the controller would decide again
// on it: a real controller reacts to every watch event, but deciding on events that cannot change its answer
// (a young node appearing, an unrelated node going away) only costs time, so the model skips them.
import type { SimEvent, SimModel } from './model.js';

type EventOf<K extends SimEvent['kind']> = Extract<SimEvent, { kind: K }>;
type Handler<K extends SimEvent['kind']> = (m: SimModel, ev: EventOf<K>) => boolean;

/** The engine's requeueAt came due; superseded when an earlier decision already asked for another time. */
const onDecide: Handler<'decide'> = (m, ev) => {
  if (ev.at !== m.nextDecide) return false;
  m.nextDecide = Infinity;
  return true;
};

/** The surge node for a placeholder is Ready (or workload preempted the placeholder first). */
const onProvisioned: Handler<'provisioned'> = (m, ev) => {
  const pod = m.s.pods.find((p) => p.metadata.name === ev.pod);
  if (!pod || m.podGeneration.get(ev.pod) !== ev.generation || pod.spec.nodeName) return true;
  if (m.random() < m.config.preemptionRate) {
    m.s = { ...m.s, pods: m.s.pods.filter((p) => p !== pod) }; // workload needed the room: the placeholder is gone
    return true;
  }
  const surge = m.addClaim(ev.at, 'surge');
  m.s = {
    ...m.s,
    pods: m.s.pods.map((p) =>
      p === pod ? { ...p, spec: { ...p.spec, nodeName: `node-${surge}` }, status: { phase: 'Running' } } : p,
    ),
  };
  return true;
};

/** A deleted NodeClaim is gone: its Node and the Pods on it with it. */
const onDrained: Handler<'drained'> = (m, ev) => {
  const claim = m.findClaim(ev.claim);
  if (!claim) return false;
  const relevant = m.touchesRotation(ev.claim);
  const node = `node-${ev.claim}`;
  m.s = {
    ...m.s,
    nodeClaims: m.s.nodeClaims.filter((c) => c !== claim),
    nodes: m.s.nodes.filter((n) => n.metadata.name !== node),
    pods: m.s.pods.filter((p) => p.spec.nodeName !== node),
  };
  const life = m.lives.get(ev.claim);
  if (life) life.endedAt = ev.at;
  return relevant;
};

/** Forceful Expiration: no budgets, no do-not-disrupt, no replacement ready first. */
const onExpire: Handler<'expire'> = (m, ev) => {
  const claim = m.findClaim(ev.claim);
  if (!claim || claim.metadata.deletionTimestamp) return false;
  const relevant = m.touchesRotation(ev.claim);
  m.result.forcefulExpirations++;
  if (m.inFreeze(ev.at)) m.result.forcefulExpirationsInFreeze++;
  const life = m.lives.get(ev.claim);
  if (life) life.end = 'expired';
  m.deleteClaim(ev.claim, ev.at);
  m.queue.push({ at: ev.at + m.config.provisioning, kind: 'replace' });
  return relevant;
};

/** Karpenter's replacement for a node removed without a surge. */
const onReplace: Handler<'replace'> = (m, ev) => {
  m.addClaim(ev.at, 'replacement');
  return false;
};

const HANDLERS: { [K in SimEvent['kind']]: Handler<K> } = {
  decide: onDecide,
  provisioned: onProvisioned,
  drained: onDrained,
  expire: onExpire,
  replace: onReplace,
};

/** Applies one event to the model; true when the controller decides on it. */
export function handle(m: SimModel, ev: SimEvent): boolean {
  return (HANDLERS[ev.kind] as (m: SimModel, ev: SimEvent) => boolean)(m, ev);
}
