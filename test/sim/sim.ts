// One seed, one run: a cluster drawn from the seed (pools, old and near-expiry NodeClaims, apps), the real
// Controller over the in-process apiserver, the world models, and the faults asked for — active during the
// first half of the run and stopped for the second, so that every run ends with the liveness check. The
// invariants are checked after every step; the first violation ends the run.
import type { Logger } from '../../controller/log.js';
import { CATCHING_UP } from '../../controller/controller.js';
import { LEASE_NAME } from '../../runtime/leader/lease-store.js';
import { ControllerMetrics } from '../../controller/metrics.js';
import { LEASE_DURATION_SECONDS, replica, type Replica } from '../../controller/replica.js';
import { ApiServer, type Obj } from './apiserver.js';
import { Invariants, liveness, type EndState, type Violation } from './invariants.js';
import { CLAIMS, NODES, POOLS, World, type App } from './models/karpenter.js';
import { Operator } from './models/operator.js';
import { leaveReferenceState } from './models/reference.js';
import { Rng, Scheduler, settle } from './scheduler.js';
import { NO_FAULTS, SimTransport, type TransportFaults } from './transport.js';
import { parseQuantity } from '../../src/util/quantity.js';
import {
  cut,
  normalise,
  OLD_NODE_AGE_SECONDS,
  statusWrites,
  type AuditEvent,
  type Cast,
  type ParityScenario,
} from '../support/parity.js';

export const FAULTS = [
  'errors',
  'conflicts',
  'lost',
  'cuts',
  'gone',
  'delays',
  'stalls',
  'restarts',
  'operators',
  'hung',
  'invalid',
  'clockjumps',
  'pauses',
  'replicas',
  'foreign',
] as const;
export type Fault = (typeof FAULTS)[number];

interface Proc {
  owner: string;
  transport: SimTransport;
  replica: Replica;
  /** Killed, or exited. */
  gone: boolean;
}

export interface SimOptions {
  seed: number;
  faults?: readonly Fault[];
  /** Virtual run length at most (ms); a run ends earlier once faults are over and the liveness check holds. */
  horizonMs?: number;
  /** How long faults last from the start (minutes, default 30); at most half the horizon. */
  faultMinutes?: number;
  maxSteps?: number;
  /**
   * A parity scenario (test/support/parity.ts) instead of the cluster drawn from the seed: no faults, one replica;
   * the run ends once the scenario's sequence is complete (its rotations done, or 5 virtual minutes watched), with
   * no liveness check. The seed still orders everything.
   */
  scenario?: ParityScenario;
}

export interface SimResult {
  seed: number;
  ok: boolean;
  violations: Violation[];
  steps: number;
  virtualMs: number;
  writes: number;
  /** What happened: rotations completed, restarts. */
  stats: {
    completed: number;
    restarts: number;
    controllerWrites: number;
    /** Writes the leadership fence refused; Lease takeovers from another holder; replicas paused. */
    fenced: number;
    takeovers: number;
    pauses: number;
    /** New leaders that waited for their caches to show their Lease write before acting. */
    catchUps: number;
    /** The controller's Events by reason: which paths the run took (RotationCompleted, GovernanceLost, …). */
    reasons: Record<string, number>;
  };
  /** The last steps and log lines, readable. */
  trace: string[];
  /**
   * With a scenario: the controller's writes, as the audit log records them, normalised and cut where the
   * scenario's sequence ends (test/support/parity.ts); and its RotationPolicy status writes, counted.
   */
  parity?: { sequence: string[]; statusWrites: number };
  replay: string;
}

const NS = 'noderotation-system';
const T0 = Date.parse('2027-01-04T00:00:00Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const PRIORITY_CLASS = 'noderotation-placeholder';
export const CONTROLLER = 'controller#';

export function replayCommand(seed: number, faults: readonly Fault[], faultMinutes?: number): string {
  const window = faults.length > 0 && faultMinutes !== undefined ? ` --fault-minutes ${faultMinutes}` : '';
  const named = faults.length > 0 ? ` --faults ${faults.join(',')}` : '';
  return `npm run sim -- --seeds 1 --from ${seed}${named}${window} --trace`;
}

export async function runSeed(o: SimOptions): Promise<SimResult> {
  if (o.scenario && (o.faults ?? []).length > 0) throw new Error('a parity scenario runs without faults');
  const faults = new Set(o.faults ?? []);
  const horizon = o.horizonMs ?? 3 * HOUR;
  const maxSteps = o.maxSteps ?? 200_000;
  const root = Rng.of(o.seed);
  // Forked in this order, so that a stream added at the end leaves the others (and every kept seed) as they were.
  const [schedRng, worldRng, netRng, faultRng, mathRng, setupRng, opRng, refRng, budgetRng, freezeRng] = Array.from(
    { length: 10 },
    () => root.fork(),
  );
  const sched = new Scheduler(schedRng as Rng, T0);
  const server = new ApiServer({ now: () => sched.now, random: (worldRng as Rng).next, audit: !!o.scenario });
  const log: string[] = [];
  // Counted as logged: the log keeps only its last 300 lines.
  let catchUps = 0;
  const note = (line: string): void => {
    if (line.includes(JSON.stringify(CATCHING_UP))) catchUps++;
    log.push(`${new Date(sched.now).toISOString()} ${line}`);
    if (log.length > 300) log.shift();
  };
  const faultsUntil = faults.size === 0 ? T0 : T0 + Math.min(horizon / 2, (o.faultMinutes ?? 30) * 60_000);
  const live = (): boolean => sched.now < faultsUntil;
  const netFaults = (): TransportFaults =>
    !live()
      ? NO_FAULTS
      : {
          errors: faults.has('errors') ? 0.03 : 0,
          conflicts: faults.has('conflicts') ? 0.2 : 0,
          lostAnswers: faults.has('lost') ? 0.03 : 0,
          cuts: faults.has('cuts') ? 0.05 : 0,
          delayMs: faults.has('delays') ? 5_000 : 0,
          hung: faults.has('hung') ? 0.01 : 0,
          invalid: faults.has('invalid') ? 0.03 : 0,
          stalls: faults.has('stalls') ? 0.02 : 0,
        };

  const world = new World(server, sched, worldRng as Rng);
  const resyncMs = (setupRng as Rng).pick([60_000, 600_000]);
  const due = o.scenario
    ? setupScenario(server, world, o.scenario)
    : setup(server, world, setupRng as Rng, budgetRng as Rng, freezeRng as Rng);
  const scenario = o.scenario ? scenarioEnd(server, o.scenario) : undefined;
  const invariants = new Invariants(
    (a) => a.startsWith(CONTROLLER),
    (a) => a === 'operator',
    { namespace: NS, name: LEASE_NAME },
  );
  if (faults.has('foreign'))
    note(
      leaveReferenceState(server, refRng as Rng, {
        namespace: NS,
        now: T0,
        priorityClass: PRIORITY_CLASS,
        register: (claim, pool) => world.register(claim, pool, true),
      }),
    );
  if (faults.has('operators')) new Operator(server, sched, opRng as Rng, NS).start(faultsUntil);

  // The reflector's watch timeout is drawn with Math.random: seeded for the run.
  const realRandom = Math.random;
  Math.random = (mathRng as Rng).next;
  // The replicas, as deployed (--leader-elect): each runs the real elector and Controller, wired as main.ts
  // wires them (controller/replica.ts), over a transport of its own. A replica that loses leadership exits, and
  // is restarted as the kubelet restarts a container; `restarts` kills one at a random step.
  const replicas = faults.has('replicas') ? 2 : 1;
  let proc = 0;
  let restarts = 0;
  let pauses = 0;
  const procs: Proc[] = [];
  const transports: SimTransport[] = [];
  const restartLater = (): void =>
    void sched.add('world', 'restart the controller', faultRng!.int(1_000, 30_000), startProcess);
  const kill = (p: Proc, why: string): void => {
    if (p.gone) return;
    p.gone = true;
    sched.kill(p.owner);
    p.transport.kill();
    procs.splice(procs.indexOf(p), 1);
    note(`${p.owner} ${why}`);
    restartLater();
  };
  function startProcess(): void {
    const owner = `${CONTROLLER}${++proc}`;
    const transport = new SimTransport(server, sched, netRng as Rng, owner, netFaults);
    transports.push(transport);
    const p: Proc = { owner, transport, gone: false, replica: null as unknown as Replica };
    p.replica = replica({
      client: transport,
      leaderElect: true,
      // The process exits (main.ts returns 1) once its controller has stopped.
      onLostLeadership: () =>
        void p.replica.stop(true).then(
          () => kill(p, 'exited: it lost leadership'),
          (e: unknown) => kill(p, `exited: it lost leadership (stop failed: ${String(e)})`),
        ),
      clock: sched.clock(owner),
      log: simLogger(owner, note),
      metrics: new ControllerMetrics(),
      namespace: NS,
      identity: owner,
      placeholderImage: 'registry.k8s.io/pause:3.10',
      priorityClass: PRIORITY_CLASS,
      concurrency: 4,
      // The flag's default (600 s), so that the engine's own wake-ups (requeueAt) carry the run, or a short one.
      resyncMs,
    });
    procs.push(p);
    p.replica.start();
  }
  const endState = (): EndState => ({
    pools: server.view('karpenter.sh/v1/nodepools'),
    claims: server.view('karpenter.sh/v1/nodeclaims'),
    nodes: server.view('/v1/nodes'),
    pods: server.view('/v1/pods').filter((p) => p.metadata.namespace === NS),
    due,
  });
  const violations: Violation[] = [];
  try {
    for (let i = 0; i < replicas; i++) startProcess();
    let stepsRun = 0;
    let clocksRight = false;
    while (stepsRun < maxSteps) {
      const step = sched.step(T0 + horizon);
      if (!step) break;
      stepsRun++;
      await settle();
      violations.push(...invariants.check(server.writes));
      if (violations.length > 0) break;
      if (scenario?.done(sched.now)) break;
      if (!live()) {
        if (!clocksRight) {
          clocksRight = true;
          for (const p of procs) sched.resetWall(p.owner);
        }
        if (stepsRun % 50 === 0 && liveness(endState()).length === 0) break;
        continue;
      }
      if (faults.has('gone') && faultRng!.chance(0.002)) {
        server.compact();
        note('fault: the apiserver compacted its watch history');
      }
      if (faults.has('restarts') && restarts < 3 && faultRng!.chance(0.002) && procs.length > 0) {
        restarts++;
        kill(faultRng!.pick(procs), `killed at step ${step.n} (after "${step.label}")`);
      }
      if (faults.has('clockjumps') && faultRng!.chance(0.002) && procs.length > 0) {
        const p = faultRng!.pick(procs);
        const ms = faultRng!.pick([-1, 1]) * faultRng!.int(1, 5 * 60) * 1_000;
        sched.jumpWall(p.owner, ms);
        const off = sched.wallOffsetOf(p.owner) / 1000;
        note(`fault: the wall clock of ${p.owner} jumps ${ms / 1000} s (now off by ${off} s)`);
      }
      // A pause right after one of a replica's own steps other than the Lease's: most often in the middle of a
      // pass, between a read and the write it decides (the case the fence is for).
      const running = procs.find((p) => p.owner === step.owner && !step.label.includes('/leases/'));
      if (faults.has('pauses') && pauses < 3 && running && faultRng!.chance(0.02)) {
        pauses++;
        // Half of them longer than the Lease: another replica may take over meanwhile (SIGSTOP, a frozen VM);
        // half of them 1–10 s (a long GC, an event loop blocked), shorter than the renew deadline: the process's
        // timers run late, and a fence that dates leadership from the wrong instant lets a write through.
        const ms = faultRng!.chance(0.5)
          ? LEASE_DURATION_SECONDS * 1000 + faultRng!.int(1, 60) * 1_000
          : faultRng!.int(1_000, 10_000);
        sched.pause(running.owner, ms);
        note(`fault: ${running.owner} paused for ${ms / 1000} s at step ${step.n} (after "${step.label}")`);
      }
    }
    if (scenario) {
      if (!scenario.done(sched.now)) violations.push({ invariant: 'liveness', message: 'the scenario did not end' });
    } else if (violations.length === 0 && stepsRun < maxSteps) violations.push(...liveness(endState()));
    else if (stepsRun >= maxSteps)
      violations.push({ invariant: 'liveness', message: `no end after ${maxSteps} steps` });
    const writes = server.writes;
    // The Lease's traffic (a try every 2 s per replica) is most of the steps: the trace keeps its last steps,
    // and of its writes only those that change the holder.
    const last = sched.lastSteps();
    const trace = [
      ...last
        .filter((s, i) => !s.label.includes('/leases/') || i >= last.length - 12)
        .slice(-120)
        .map((s) => `#${s.n} ${new Date(s.at).toISOString()} [${s.owner}] ${s.label}`),
      '--- log ---',
      ...log.slice(-80),
      '--- writes ---',
      ...writes
        .filter((w) => w.resource !== LEASES || holderOf(w.before) !== holderOf(w.after))
        .slice(-40)
        .map(describeWrite),
    ];
    return {
      seed: o.seed,
      ok: violations.length === 0,
      violations,
      steps: stepsRun,
      virtualMs: sched.now - T0,
      writes: writes.length,
      stats: {
        completed: writes.filter(
          (w) =>
            w.actor.startsWith(CONTROLLER) &&
            w.after?.metadata.annotations?.['noderotation.io/last-rotation-at'] !==
              w.before?.metadata.annotations?.['noderotation.io/last-rotation-at'],
        ).length,
        restarts,
        controllerWrites: writes.filter((w) => w.actor.startsWith(CONTROLLER)).length,
        fenced: transports.reduce((n, t) => n + t.fenced, 0),
        takeovers: writes.filter(
          (w) =>
            w.resource === LEASES &&
            !!holderOf(w.before) &&
            !!holderOf(w.after) &&
            holderOf(w.before) !== holderOf(w.after),
        ).length,
        pauses,
        catchUps,
        reasons: reasonsOf(writes),
      },
      trace,
      replay: replayCommand(o.seed, [...faults], o.faultMinutes),
      ...(scenario ? { parity: scenario.result() } : {}),
    };
  } finally {
    Math.random = realRandom;
  }
}

const LEASES = 'coordination.k8s.io/v1/leases';
const holderOf = (o: Obj | undefined): string | undefined =>
  (o?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;

function reasonsOf(writes: readonly import('./apiserver.js').Write[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of writes) {
    const reason = (w.after as { reason?: string } | undefined)?.reason;
    if (w.verb === 'create' && w.resource === 'events.k8s.io/v1/events' && reason) out[reason] = (out[reason] ?? 0) + 1;
  }
  return out;
}

export function describeWrite(w: import('./apiserver.js').Write): string {
  const ann = (o: Obj | undefined) => o?.metadata.annotations ?? {};
  const changed = Object.keys({ ...ann(w.before), ...ann(w.after) })
    .filter((k) => ann(w.before)[k] !== ann(w.after)[k])
    .map((k) => `${k}=${ann(w.after)[k] ?? '∅'}`);
  const at = new Date(w.at).toISOString();
  const sub = w.subresource ? `/${w.subresource}` : '';
  const gone = w.after ? '' : ' (removed)';
  return `write #${w.seq} ${at} ${w.actor} ${w.verb} ${w.resource}${sub} ${w.name}${gone} ${changed.join(' ')}`.trim();
}

function simLogger(owner: string, note: (l: string) => void, base: Record<string, unknown> = {}): Logger {
  const emit =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}): void =>
      note(`${owner} ${level} ${JSON.stringify(msg)} ${JSON.stringify({ ...base, ...fields })}`);
  return {
    debug: () => undefined,
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    with: (fields) => simLogger(owner, note, { ...base, ...fields }),
  };
}

/**
 * The cluster at the start; returns the NodeClaims due for rotation. Half the NodePools allow every node to be
 * disrupted at once (`budgets: [{nodes: 100%}]`; a drawn stream of its own, so the rest of a seed's draws stay
 * as they were): with Karpenter's default of 10% on pools this small, the budget alone would keep one rotation
 * at a time, and a controller that let a second start while the first drains would go unseen (S1).
 */
function setup(server: ApiServer, world: World, rng: Rng, budgets: Rng, freezes: Rng): string[] {
  server.seed('/apis/scheduling.k8s.io/v1/priorityclasses', {
    metadata: { name: PRIORITY_CLASS },
    value: -10,
    preemptionPolicy: 'Never',
  });
  const pools = rng.int(1, 2);
  const due: string[] = [];
  const names: string[] = [];
  for (let p = 0; p < pools; p++) {
    const pool = `pool-${p}`;
    names.push(pool);
    const expireAfter = rng.pick(['336h', '720h']);
    server.seed(POOLS, {
      metadata: { name: pool },
      spec: {
        ...(budgets.chance(0.5) ? { disruption: { budgets: [{ nodes: '100%' }] } } : {}),
        template: {
          spec: {
            expireAfter,
            terminationGracePeriod: rng.pick(['10m', '1h']),
            requirements: [
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
              { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-a'] },
            ],
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          },
        },
      },
    });
    const claims = rng.int(1, 3);
    for (let c = 0; c < claims; c++) {
      const name = `${pool}-old${c}`;
      // Old enough to be due (past ageThreshold), and now and then close to its own expiry.
      const nearExpiry = rng.chance(0.25);
      const age = nearExpiry ? duration(expireAfter) - rng.int(1, 40) * 60_000 : rng.int(2, 10) * DAY;
      server.seed(CLAIMS, {
        metadata: {
          name,
          labels: { 'karpenter.sh/nodepool': pool },
          finalizers: ['karpenter.sh/termination'],
          creationTimestamp: new Date(T0 - age).toISOString().replace('.000Z', 'Z'),
        },
        spec: {
          expireAfter,
          terminationGracePeriod: '1h',
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        },
      });
      world.register(name, pool, true);
      due.push(name);
    }
    const apps = rng.int(1, 2);
    for (let a = 0; a < apps; a++) {
      const app: App = { name: `app-${p}-${a}`, namespace: 'apps', pool, replicas: rng.int(1, 3), cpu: 1 };
      world.apps.push(app);
    }
  }
  server.seed('/apis/noderotation.io/v1alpha1/rotationpolicies', {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name: 'all' },
    spec: {
      nodePools: names,
      maintenanceWindows: [
        { timezone: 'UTC', days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], start: '00:00', end: '00:00' },
      ],
      ageThreshold: '24h',
      surge: {
        // A short readyTimeout against launches of 15–90 s now and then fails an attempt (rollback, reap).
        readyTimeout: rng.pick(['1m', '2m', '10m']),
        cooldownAfter: rng.pick(['0s', '2m']),
        retryBackoff: '5m',
        failurePause: rng.pick(['1m', '5m']),
        ...(rng.chance(0.5) ? { forcefulFallback: { enabled: true } } : {}),
      },
      ...scheduledFreeze(freezes),
    },
  });
  world.poke(0);
  void NODES;
  return due;
}

/**
 * A third of the runs have a scheduled freeze within the first two hours (over the deadlines of claims near their
 * expiry, now and then), half of those with rotation ahead of it: the fallback rule and the start gates then count
 * with it.
 */
function scheduledFreeze(rng: Rng): Record<string, unknown> {
  if (!rng.chance(1 / 3)) return {};
  const start = T0 + rng.int(0, 60) * 60_000;
  const end = start + rng.int(10, 60) * 60_000;
  const iso = (t: number): string => new Date(t).toISOString().replace('.000Z', 'Z');
  return {
    freezes: [{ start: iso(start), end: iso(end), reason: 'sim' }],
    ...(rng.chance(0.5) ? { preFreezeRotation: { enabled: true } } : {}),
  };
}

function duration(d: string): number {
  return Number(d.replace('h', '')) * HOUR;
}

/** A parity scenario's cluster (test/support/parity.ts): its pool, old claims with one app Pod each, its policy. */
function setupScenario(server: ApiServer, world: World, s: ParityScenario): string[] {
  server.seed('/apis/scheduling.k8s.io/v1/priorityclasses', {
    metadata: { name: PRIORITY_CLASS },
    value: -10,
    preemptionPolicy: 'Never',
  });
  const pool = s.name;
  const template = {
    expireAfter: s.pool.expireAfter,
    terminationGracePeriod: s.pool.terminationGracePeriod,
    requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
  };
  server.seed(POOLS, { metadata: { name: pool }, spec: { template: { spec: template } } });
  const app: App = {
    name: 'app',
    namespace: 'apps',
    pool,
    replicas: s.nodes,
    cpu: parseQuantity(s.app.cpu),
    ...(s.app.annotations ? { annotations: s.app.annotations } : {}),
  };
  world.apps.push(app);
  const due: string[] = [];
  for (let c = 0; c < s.nodes; c++) {
    const name = `${pool}-old${c}`;
    server.seed(CLAIMS, {
      metadata: {
        name,
        labels: { 'karpenter.sh/nodepool': pool },
        finalizers: ['karpenter.sh/termination'],
        creationTimestamp: new Date(T0 - OLD_NODE_AGE_SECONDS * 1000).toISOString().replace('.000Z', 'Z'),
      },
      spec: template,
    });
    world.register(name, pool, true);
    // One Pod of the app on each node, as the e2e cluster's Deployment spreads them.
    world.bind(app, `${app.name}-${c}`, `node-${name}`);
    due.push(name);
  }
  server.seed('/apis/noderotation.io/v1alpha1/rotationpolicies', {
    apiVersion: 'noderotation.io/v1alpha1',
    kind: 'RotationPolicy',
    metadata: { name: PARITY_POLICY },
    spec: { nodePools: [pool], ...s.policy },
  });
  world.poke(0);
  return due;
}

const PARITY_POLICY = 'parity';
/** How long a scenario that expects no rotation is watched (virtual). */
const WATCH_MS = 5 * 60_000;

/** The controller's writes in a scenario run, normalised; whether its sequence is complete. */
function scenarioEnd(
  server: ApiServer,
  s: ParityScenario,
): { done: (now: number) => boolean; result: () => { sequence: string[]; statusWrites: number } } {
  const events = (): AuditEvent[] => server.audit.filter((e) => e.user.username.startsWith(CONTROLLER));
  const cast: Cast = {
    pool: s.name,
    policy: PARITY_POLICY,
    claimOfNode: (node) => {
      const w = server.writes.find((x) => x.resource === '/v1/nodes' && x.name === node);
      const owners = (w?.after ?? w?.before)?.metadata.ownerReferences as { name: string }[] | undefined;
      return owners?.[0]?.name;
    },
  };
  const sequence = (): string[] | undefined => cut(normalise(events(), cast), s);
  let seen = -1;
  let complete = false;
  return {
    done: (now) => {
      if (s.rotations === 0) return now - T0 >= WATCH_MS;
      if (!complete && server.audit.length !== seen) {
        seen = server.audit.length;
        complete = sequence() !== undefined;
      }
      return complete;
    },
    result: () => ({ sequence: sequence() ?? normalise(events(), cast), statusWrites: statusWrites(events()) }),
  };
}
