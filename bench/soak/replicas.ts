// The controller as deployed, two replicas with --leader-elect, each as its own process and ServiceAccount (so
// that the audit log tells their writes apart), kept running as a Deployment's kubelet would: a replica that
// exits — killed, or leaving after it lost the Lease — is started again after a back-off.
import { ControllerProcess } from '../../test/e2e/helpers/controller-process.js';

export interface Slot {
  /** "a" or "b". */
  name: string;
  /** The ServiceAccount's user name in the audit log, and its kubeconfig (through the slow-apiserver proxy). */
  user: string;
  kubeconfig: string;
  proc: ControllerProcess | null;
  /** Lease holder identities this slot's processes announced (their first log line). */
  identities: Set<string>;
  starts: number;
  paused: boolean;
}

const BACKOFF_MS = 2_000;

export class Replicas {
  readonly slots: Slot[];
  private stopping = false;

  constructor(
    private readonly namespace: string,
    kubeconfigs: { name: string; user: string; kubeconfig: string }[],
    private readonly log: (msg: string) => void,
  ) {
    this.slots = kubeconfigs.map((k) => ({
      name: k.name,
      user: k.user,
      proc: null,
      identities: new Set(),
      starts: 0,
      paused: false,
      kubeconfig: k.kubeconfig,
    }));
  }

  async start(): Promise<void> {
    await Promise.all(this.slots.map((s) => this.launch(s)));
  }

  private async launch(slot: Slot): Promise<void> {
    if (this.stopping) return;
    const proc = new ControllerProcess(this.namespace, ['--leader-elect'], slot.kubeconfig);
    slot.proc = proc;
    slot.starts++;
    slot.paused = false;
    try {
      await proc.start();
    } catch (e) {
      this.log(`replica ${slot.name}: start failed (${String(e).split('\n')[0]}); trying again`);
    }
    const identity = proc.logs.find((l) => l.msg === 'starting')?.identity;
    if (typeof identity === 'string') slot.identities.add(identity);
    void proc.exited().then(async (code) => {
      if (slot.proc !== proc || this.stopping) return;
      this.log(`replica ${slot.name} exited (${code === null ? 'killed' : `code ${code}`}); restarting`);
      await new Promise((r) => setTimeout(r, BACKOFF_MS));
      await this.launch(slot);
    });
  }

  /** The slot whose process holds `identity`. */
  slotOf(identity: string | undefined): Slot | undefined {
    return identity === undefined ? undefined : this.slots.find((s) => s.identities.has(identity));
  }

  /** True when every running replica answers /readyz with 200. */
  async allReady(): Promise<boolean> {
    const codes = await Promise.all(
      this.slots.map((s) => (s.proc && !s.paused ? s.proc.get('/readyz', true) : Promise.resolve(0))),
    );
    return codes.every((c) => c === 200);
  }

  /** SIGTERM to every replica, no restart. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const s of this.slots) if (s.paused) s.proc?.resume();
    await Promise.all(this.slots.map((s) => s.proc?.stop() ?? Promise.resolve(null)));
  }
}
