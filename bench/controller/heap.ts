// Where the controller's memory goes (issue 19 item 6): the controller's own caches (controller/caches.ts),
// synced one kind at a time against a live cluster, with V8's heap measured after a full GC before and after
// each, so each kind's row is the heap its cached objects hold (shapes applied, shared parts shared), not the
// garbage of the lists that filled it. Then the process's whole budget: a bare Node process, the controller's
// modules, the caches, and what V8 and the allocator keep beyond the live heap.
//
//   node --expose-gc --import tsx bench/controller/heap.ts [--kubeconfig FILE] [--namespace NS] [--out FILE]
//
// Read-only: it lists and watches, never writes.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { sampleProc } from './measure.js';

interface Row {
  kind: string;
  objects: number;
  heapBytes: number;
  bytesPerObject: number;
  syncMs: number;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

/** The live heap after two full collections (the second frees what the first's finalizers released). */
function liveHeap(): number {
  gc?.();
  gc?.();
  return v8.getHeapStatistics().used_heap_size;
}

const rss = (): number => sampleProc(process.pid).rssKiB * 1024;
const mib = (b: number): string => (b / 2 ** 20).toFixed(1);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', default: 'node-rotation-system' },
      out: { type: 'string' },
    },
  });
  const bare = { heap: liveHeap(), rss: rss() };
  // The controller's modules, as `bin/noderotation.js controller` loads them.
  const { Caches } = await import('../../controller/caches.js');
  const { KubeClient } = await import('../../runtime/kube/client.js');
  const { realClock } = await import('../../runtime/queue/clock.js');
  const { loadKubeConfig } = await import('../../controller/main.js');
  const modules = { heap: liveHeap(), rss: rss() };

  const client = new KubeClient(loadKubeConfig(values.kubeconfig));
  const caches = new Caches(client, realClock, values.namespace);
  const stop = new AbortController();
  const kinds = [
    ['nodeclaims', caches.nodeClaims],
    ['nodes', caches.nodes],
    ['nodepools', caches.nodePools],
    ['rotationpolicies', caches.policies],
    ['placeholders', caches.placeholders],
    ['priorityclasses', caches.priorityClasses],
  ] as const;
  const rows: Row[] = [];
  const running: Promise<void>[] = [];
  for (const [kind, r] of kinds) {
    const before = liveHeap();
    const t0 = performance.now();
    running.push(r.run(stop.signal));
    await r.whenSynced();
    const syncMs = performance.now() - t0;
    const heapBytes = liveHeap() - before;
    rows.push({
      kind,
      objects: r.size,
      heapBytes,
      bytesPerObject: r.size ? Math.round(heapBytes / r.size) : 0,
      syncMs,
    });
  }
  const cached = { heap: liveHeap(), rss: rss(), stats: v8.getHeapStatistics(), spaces: v8.getHeapSpaceStatistics() };
  stop.abort();
  await Promise.allSettled(running);
  client.close();

  const report = {
    node: process.version,
    bare: { heapMiB: mib(bare.heap), rssMiB: mib(bare.rss) },
    modules: { heapMiB: mib(modules.heap - bare.heap), rssMiB: mib(modules.rss - bare.rss) },
    kinds: rows.map((r) => ({ ...r, heapMiB: mib(r.heapBytes), syncMs: Math.round(r.syncMs) })),
    cached: {
      liveHeapMiB: mib(cached.heap),
      rssMiB: mib(cached.rss),
      heapCommittedMiB: mib(cached.stats.total_heap_size),
      externalMiB: mib(cached.stats.external_memory),
      spaces: Object.fromEntries(
        cached.spaces.map((s) => [s.space_name, { usedMiB: mib(s.space_used_size), committedMiB: mib(s.space_size) }]),
      ),
    },
  };
  const text = `${JSON.stringify(report, null, 2)}\n`;
  if (values.out) writeFileSync(values.out, text);
  process.stdout.write(text);
}

await main();
