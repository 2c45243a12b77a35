// A package the program may never need, loaded the first time it is: through require, which takes a CommonJS
// entry as it is (an ES import of it goes through Node's interop and, for a UMD bundle, costs more), and only
// once the caller asks for it, so a process that never does keeps its memory (docs/benchmarks.md: rrule,
// luxon's ICU data, the YAML parser of a kubeconfig file).
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/** `pick` of package `name`, required on the first call and kept. */
export function onFirstUse<M, T>(name: string, pick: (module: M) => T): () => T {
  let loaded: { value: T } | undefined;
  return () => (loaded ??= { value: pick(requireHere(name) as M) }).value;
}
