// The rotation reconciler's events: events.k8s.io/v1 Events from `noderotation.io/controller`. The apiserver
// requires an Event about a cluster-scoped object (NodePool, NodeClaim, Node) to live in `default` (as client-go's
// recorder writes them), and one about a namespaced object (a placeholder Pod) in that object's namespace.
// Two kinds arrive here: the engine's transition events (each one happened once: emitted once), and the
// level-triggered warnings of a pool's report (findings, ShortLead, conflicts: `levelWarnings`), emitted when a
// condition starts and again only after it has cleared. Their reasons are typed end to end: the engine's catalogue
// (EVENT_REASONS in src/engine/actions.ts) or a finding's reason, never a free string. An identical event repeated
// within the series window becomes a count on the first one (events.k8s.io's `series`), as client-go's recorder
// does, so a flapping condition cannot flood the apiserver. The two are sent differently:
//  - a transition event (RotationStarted, DrainStarted, RotationCompleted, …) is written in the pass, in order
//    with the writes it reports (`record`, awaited): the rotation's trail survives a replica killed right after;
//  - level-triggered warnings are queued with the time they were seen and sent after the pass, in order, one at
//    a time (`emit`), as client-go's broadcaster sends every event: a pool's findings (five or so per pool when a
//    controller starts) never hold its pass up, and one lost to a crash is emitted again by the next leader.
// (The status reconciler emits no events: a policy's conditions are its record.)
import { createHash } from 'node:crypto';
import type { EventReason, PoolReport, Ref } from '../../src/engine/types.js';
import type { Finding, Reason as FindingReason } from '../../src/derivation/findings.js';
import { boundedCache } from '../../src/util/bounded-cache.js';
import { truncate } from '../../src/util/describe.js';
import type { Clock } from '../../runtime/queue/clock.js';
import type { KubeApi } from '../../runtime/kube/client.js';
import { microTime } from '../../runtime/kube/micro-time.js';

export const REPORTING_CONTROLLER = 'noderotation.io/controller';
const SERIES_WINDOW_MS = 6 * 60_000;
const NOTE_LIMIT = 1024;

/** The reasons of the rotation's events: a catalogued event reason, or a finding's (level-triggered warnings). */
export type RotationEventReason = EventReason | FindingReason;

export interface EventInput {
  target: Ref & { uid?: string };
  type: 'Normal' | 'Warning';
  reason: RotationEventReason;
  note: string;
}

/** Where the apiserver accepts an Event about `target`. */
export const eventNamespace = (target: Ref): string => target.namespace ?? 'default';

const API_VERSION: Record<Ref['kind'], string> = {
  NodePool: 'karpenter.sh/v1',
  NodeClaim: 'karpenter.sh/v1',
  Node: 'v1',
  Pod: 'v1',
};

/** The Event object for one occurrence (pure, so its shape is tested without an apiserver). */
export function eventObject(e: EventInput, instance: string, now: number): Record<string, unknown> {
  const namespace = eventNamespace(e.target);
  const id = createHash('sha256')
    .update(`${e.target.kind}/${e.target.name}/${e.reason}/${e.note}/${now}`)
    .digest('hex')
    .slice(0, 10);
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${e.target.name.slice(0, 200)}.${id}`, namespace },
    eventTime: microTime(now),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: instance,
    action: 'Rotate',
    reason: e.reason,
    type: e.type,
    note: truncate(e.note, NOTE_LIMIT),
    regarding: {
      apiVersion: API_VERSION[e.target.kind],
      kind: e.target.kind,
      name: e.target.name,
      ...(e.target.namespace ? { namespace: e.target.namespace } : {}),
      ...(e.target.uid ? { uid: e.target.uid } : {}),
    },
  };
}

/** Events queued and not yet sent, at most: past it an event is dropped (and logged), as client-go's are. */
export const MAX_QUEUED_EVENTS = 1000;

export class EventRecorder {
  /** Recent events by identity, for series counting; bounded. */
  private readonly recent = boundedCache<string, { name: string; count: number; first: number }>(4096);
  /** Level-triggered conditions currently active, per NodePool: "reason/target". */
  private readonly active = new Map<string, Set<string>>();
  private readonly queue: { e: EventInput; at: number }[] = [];
  private sending: Promise<void> | null = null;

  constructor(
    private readonly client: KubeApi,
    private readonly instance: string,
    private readonly clock: Clock,
    private readonly log: (msg: string, fields: Record<string, unknown>) => void,
  ) {}

  /** Writes one event now, in the pass (a transition): resolves once written or failed (never rejects). */
  record(e: EventInput): Promise<void> {
    return this.send(e, this.clock.now());
  }

  /** Queues one event, stamped now; it is sent after the queue before it. Never fails the caller. */
  emit(e: EventInput): void {
    if (this.queue.length >= MAX_QUEUED_EVENTS) {
      this.log('event queue full; event dropped', { reason: e.reason, target: e.target.name });
      return;
    }
    this.queue.push({ e, at: this.clock.now() });
    this.kick();
  }

  /** Resolves once every event queued so far has been sent (or has failed): for shutdown and tests. */
  async idle(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private kick(): void {
    if (this.sending || this.queue.length === 0) return;
    this.sending = this.drain().finally(() => {
      this.sending = null;
      this.kick();
    });
  }

  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) await this.send(next.e, next.at);
  }

  /** Sends one event (or counts it on the first of its series); a failure is logged (events are not state). */
  private async send(e: EventInput, now: number): Promise<void> {
    const identity = `${e.target.kind}/${e.target.namespace ?? ''}/${e.target.name}/${e.type}/${e.reason}/${e.note}`;
    const seen = this.recent.get(identity, () => ({ name: '', count: 0, first: now }));
    try {
      if (seen.name !== '' && now - seen.first < SERIES_WINDOW_MS) {
        seen.count++;
        const path = `/apis/events.k8s.io/v1/namespaces/${eventNamespace(e.target)}/events/${seen.name}`;
        await this.client.request('PATCH', path, {
          contentType: 'application/merge-patch+json',
          body: { series: { count: seen.count, lastObservedTime: eventObject(e, '', now).eventTime } },
        });
        return;
      }
      const obj = eventObject(e, this.instance, now);
      await this.client.request('POST', `/apis/events.k8s.io/v1/namespaces/${eventNamespace(e.target)}/events`, {
        body: obj,
      });
      Object.assign(seen, { name: (obj.metadata as { name: string }).name, count: 1, first: now });
    } catch (err) {
      this.log('could not record an event', { reason: e.reason, target: e.target.name, error: String(err) });
    }
  }

  /**
   * The level-triggered warnings of one pool's pass: those that just became active are emitted; those no
   * longer reported are forgotten, so they are emitted again if they come back.
   */
  level(nodePool: string, current: EventInput[]): void {
    const key = (e: EventInput): string => `${e.reason}/${e.target.kind}/${e.target.name}`;
    const before = this.active.get(nodePool) ?? new Set<string>();
    const now = new Set(current.map(key));
    this.active.set(nodePool, now);
    for (const e of current) if (!before.has(key(e))) this.emit(e);
  }

  forgetPool(nodePool: string): void {
    this.active.delete(nodePool);
  }
}

/**
 * The level-triggered warnings of a report: warning findings (and those of its forecast, `ahead`) and ShortLead
 * claims (fatal ones are conditions).
 */
export function levelWarnings(r: PoolReport, ahead: readonly Finding[] = []): EventInput[] {
  return [
    ...[...r.findings, ...ahead]
      .filter((f) => f.severity === 'warning' && f.reason !== 'ShortLead')
      .map((f) => ({
        target: { kind: 'NodePool' as const, name: r.nodePool },
        type: 'Warning' as const,
        reason: f.reason,
        note: `${f.field}: ${f.message}`,
      })),
    ...(r.governance === 'conflict'
      ? [
          {
            target: { kind: 'NodePool' as const, name: r.nodePool },
            type: 'Warning' as const,
            reason: 'PolicyConflict' as const,
            note: `RotationPolicies ${r.conflictingPolicies.join(', ')} match this NodePool equally specifically.`,
          },
        ]
      : []),
    ...r.shortLead.map((claim) => ({
      target: { kind: 'NodeClaim' as const, name: claim },
      type: 'Warning' as const,
      reason: 'ShortLead' as const,
      note: `NodeClaim ${claim}'s own expireAfter cannot guarantee minRotationChances windows.`,
    })),
  ];
}
