// One seed, one run: a cluster drawn from the seed (pools, old and near-expiry NodeClaims, apps), the real
// Controller over the in-process apiserver, the world models, and the faults asked for — active during the
// first half of the run and stopped for the second, so that every run ends with the liveness check. The
// invariants are checked after every step; the first violation ends the run.
import { Controller } from '../../controller/controller.js';
import type { Logger } from '../../controller/log.js';
import { ControllerMetrics } from '../../controller/metrics.js';
import { ApiServer, type Obj } from './apiserver.js';
import { Invariants, liveness, type EndState, type Violation } from './invariants.js';
import { CLAIMS, NODES, POOLS, World, type App } from './models/karpenter.js';
import { Operator } from './models/operator.js';
import { Rng, Scheduler, settle } from './scheduler.js';
import { NO_FAULTS, SimTransport, type TransportFaults } from './transport.js';

export const FAULTS = ['errors', 'conflicts', 'lost', 'cuts', 'gone', 'delays', 'restarts', 'operators'] as const;
export type Fault = (typeof FAULTS)[number];

export interface SimOptions {
  seed: number;
  faults?: readonly Fault[];
  /** Virtual run length at most (ms); a run ends earlier once faults are over and the liveness check holds. */
  horizonMs?: number;
  /** How long faults last from the start (ms); at most half the horizon. */
  faultMs?: number;
  maxSteps?: number;
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
    /** The controller's Events by reason: which paths the run took (RotationCompleted, GovernanceLost, …). */
    reasons: Record<string, number>;
  };
  /** The last steps and log lines, readable. */
  trace: string[];
  replay: string;
}

const NS = 'noderotation-system';
const T0 = Date.parse('2027-01-04T00:00:00Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const PRIORITY_CLASS = 'noderotation-placeholder';
export const CONTROLLER = 'controller#';

export function replayCommand(seed: number, faults: readonly Fault[]): string {
  return `npm run sim -- --seeds 1 --from ${seed}${faults.length > 0 ? ` --faults ${faults.join(',')}` : ''} --trace`;
}

export async function runSeed(o: SimOptions): Promise<SimResult> {
  const faults = new Set(o.faults ?? []);
  const horizon = o.horizonMs ?? 3 * HOUR;
  const maxSteps = o.maxSteps ?? 200_000;
  const root = Rng.of(o.seed);
  const [schedRng, worldRng, netRng, faultRng, mathRng, setupRng, opRng] = Array.from({ length: 7 }, () => root.fork());
  const sched = new Scheduler(schedRng as Rng, T0);
  const server = new ApiServer({ now: () => sched.now, random: (worldRng as Rng).next });
  const log: string[] = [];
  const note = (line: string): void => {
    log.push(`${new Date(sched.now).toISOString()} ${line}`);
    if (log.length > 300) log.shift();
  };
  const faultsUntil = faults.size === 0 ? T0 : T0 + Math.min(horizon / 2, o.faultMs ?? 30 * 60_000);
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
        };

  const world = new World(server, sched, worldRng as Rng);
  const resyncMs = (setupRng as Rng).pick([60_000, 600_000]);
  const due = setup(server, world, setupRng as Rng);
  const invariants = new Invariants((a) => a.startsWith(CONTROLLER));
  if (faults.has('operators')) new Operator(server, sched, opRng as Rng, NS).start(faultsUntil);

  // The reflector's watch timeout is drawn with Math.random: seeded for the run.
  const realRandom = Math.random;
  Math.random = (mathRng as Rng).next;
  let proc = 0;
  let restarts = 0;
  let current: { ctl: Controller; transport: SimTransport; owner: string } | null = null;
  const startProcess = (): void => {
    const owner = `${CONTROLLER}${++proc}`;
    const transport = new SimTransport(server, sched, netRng as Rng, owner, netFaults);
    const ctl = new Controller({
      client: transport,
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
    current = { ctl, transport, owner };
    ctl
      .sync()
      .then(() => ctl.startWorking())
      .catch((e: unknown) => note(`${owner} could not start: ${String(e)}`));
  };
  const endState = (): EndState => ({
    pools: server.list('karpenter.sh/v1/nodepools'),
    claims: server.list('karpenter.sh/v1/nodeclaims'),
    nodes: server.list('/v1/nodes'),
    pods: server.list('/v1/pods').filter((p) => p.metadata.namespace === NS),
    due,
  });
  const violations: Violation[] = [];
  try {
    startProcess();
    let steps = 0;
    while (steps < maxSteps) {
      const step = sched.step(T0 + horizon);
      if (!step) break;
      steps++;
      await settle();
      violations.push(...invariants.check(server.writes));
      if (violations.length > 0) break;
      if (!live() && steps % 50 === 0 && liveness(endState()).length === 0) break;
      if (live() && faults.has('gone') && faultRng!.chance(0.002)) {
        server.compact();
        note('fault: the apiserver compacted its watch history');
      }
      if (live() && faults.has('restarts') && restarts < 3 && faultRng!.chance(0.002) && current) {
        const dead: { transport: SimTransport; owner: string } = current;
        sched.kill(dead.owner);
        dead.transport.kill();
        restarts++;
        note(`fault: ${dead.owner} killed at step ${step.n} (after "${step.label}")`);
        sched.add('world', 'restart the controller', faultRng!.int(1_000, 30_000), startProcess);
        current = null;
      }
    }
    if (violations.length === 0 && steps < maxSteps) violations.push(...liveness(endState()));
    else if (steps >= maxSteps) violations.push({ invariant: 'liveness', message: `no end after ${maxSteps} steps` });
    const writes = server.writes;
    const trace = [
      ...sched
        .lastSteps()
        .slice(-120)
        .map((s) => `#${s.n} ${new Date(s.at).toISOString()} [${s.owner}] ${s.label}`),
      '--- log ---',
      ...log.slice(-80),
      '--- writes ---',
      ...writes.slice(-40).map(describeWrite),
    ];
    return {
      seed: o.seed,
      ok: violations.length === 0,
      violations,
      steps,
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
        reasons: reasonsOf(writes),
      },
      trace,
      replay: replayCommand(o.seed, [...faults]),
    };
  } finally {
    Math.random = realRandom;
  }
}

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

/** The cluster at the start; returns the NodeClaims due for rotation. */
function setup(server: ApiServer, world: World, rng: Rng): string[] {
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
    },
  });
  world.poke(0);
  void NODES;
  return due;
}

function duration(d: string): number {
  return Number(d.replace('h', '')) * HOUR;
}
