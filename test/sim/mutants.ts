// npm run sim:mutants [-- --only a,b] [--seeds N] [--no-sanity] [--keep] [--baseline]: bugs of our own, seeded
// into copies of the controller, must each be caught by the simulation within CI's plan (issue 18's acceptance
// check). --baseline runs only the unmodified copy, over the whole plan.
//
// Each mutant is one or more exact edits (a search string that must occur exactly once in its file at HEAD, and
// its replacement): an edit that no longer applies fails the run, naming the mutant, so that mutants do not rot
// silently when the code changes (mutants.test.ts checks it in the unit suite). For each mutant the repository's
// tracked files at HEAD are copied into a temporary directory (`git archive HEAD`), node_modules is linked, the
// edits are applied, and CI's runs (seeds.ts, `ciPart`) are run there in order — the parts interleaved round
// robin, so that a cheap early catch is found — until the first failing seed. Two copies run at once at most.
// Then the unmodified copy runs the same runs as far as the longest catch (the sanity check: a catch must be
// the mutant's, not a failure of the unmodified code). Prints a markdown table; exits 1 if any mutant survives
// the budget or the unmodified copy fails.
import { execFileSync, execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CI_PARTS, ciPart, type SimRun } from './seeds.js';

export interface Edit {
  /** A path under controller/, runtime/ or src/. */
  file: string;
  search: string;
  replace: string;
}

export interface Mutant {
  name: string;
  /** The bug it models. */
  bug: string;
  edits: Edit[];
}

export const MUTANTS: readonly Mutant[] = [
  {
    name: 'delete-unconditioned',
    bug: 'the NodeClaim DELETE without its UID/resourceVersion precondition',
    edits: [
      {
        file: 'controller/execute/executor.ts',
        search:
          "body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: a.uid, resourceVersion: rv } },",
        replace: "body: { apiVersion: 'v1', kind: 'DeleteOptions' },",
      },
    ],
  },
  {
    name: 'fence-removed',
    bug: 'the replica wired with an always-true leadership fence',
    edits: [
      {
        file: 'controller/replica.ts',
        search: 'fencedApi(client, () => elector?.fence() ?? false)',
        replace: 'fencedApi(client, () => true)',
      },
    ],
  },
  {
    name: 'resume-unchecked',
    bug: 'a delete resumed after a restart (claim draining, not deleted) without its checks (engine and executor)',
    edits: [
      {
        file: 'src/engine/rotation.ts',
        search: 'const refused = candidateDeletable(c, claim, mode, parseTime(ann[A.drainingAt]) ?? c.now);',
        replace: 'const refused: string | null = null;',
      },
      {
        file: 'controller/execute/executor.ts',
        search: 'const why = deleteJustification(c, a.target);',
        replace: 'const why: string | null = null;',
      },
    ],
  },
  {
    name: 'fresh-judgement-skipped',
    bug: "the executor's judgement of a NodeClaim delete on fresh state skipped (the engine's alone remains)",
    edits: [
      {
        file: 'controller/execute/executor.ts',
        search: 'const why = deleteJustification(c, a.target);',
        replace: 'const why: string | null = null;',
      },
    ],
  },
  {
    name: 'patch-unconditioned',
    bug: 'patches (annotations, cordons) without the resourceVersion the decision read: a racing write is lost',
    edits: [
      {
        file: 'controller/execute/executor.ts',
        search: 'body: { ...body, metadata: { ...body.metadata, resourceVersion: rv } },',
        replace: 'body,',
      },
    ],
  },
  {
    name: 'fence-leading-only',
    bug: 'the fence checks only "leading", not the monotonic age of the last renew',
    edits: [
      {
        file: 'runtime/leader/elector.ts',
        search: 'if (age < this.o.renewDeadlineMs) return true;',
        replace: 'if (age < Infinity) return true;',
      },
    ],
  },
  {
    name: 'renew-from-answer',
    bug: "the fence counts a renew from its answer, not from the start of the try (the Lease's time spent in flight)",
    edits: [
      {
        file: 'runtime/leader/elector.ts',
        search: 'this.renewedAt = started;',
        replace: 'this.renewedAt = this.o.clock.mono();',
      },
    ],
  },
  {
    name: 'gate-released-at-drain',
    bug: "S1: the serial gate (the anchor) released once the old claim's delete is issued: a second starts meanwhile",
    edits: [
      {
        file: 'src/engine/rotation.ts',
        search: "return { actions, waiting: 'draining', drainStuck: c.now > stuckAt };",
        replace:
          "const over = 'the drain is left to Karpenter';\n" +
          '  return { actions: [...actions, ...release(c, name, over), clearAnchor(c, over)], ' +
          'waiting: null, drainStuck: false };',
      },
    ],
  },
  {
    name: 'surge-link-one-way',
    bug: "a surge claim reaped at rollback on the old claim's surge-claim alone (its own surge-for not checked)",
    edits: [
      {
        file: 'src/engine/justify.ts',
        search:
          'old.metadata.annotations?.[A.surgeClaim] !== name ||\n' +
          '    surge.metadata.annotations?.[A.surgeFor] !== old.metadata.name\n',
        replace: 'old.metadata.annotations?.[A.surgeClaim] !== name\n',
      },
    ],
  },
  {
    name: 'placeholder-left',
    bug: 'the placeholder not deleted when its rotation ends (completion, rollback, governance lost)',
    edits: [
      {
        file: 'src/engine/rotation.ts',
        search: 'if (ph) out.push(deletePod(ph, why));',
        replace: 'void ph;',
      },
    ],
  },
];

/** `text` with the mutant's edit applied; throws, naming the mutant, unless the search occurs exactly once. */
export function applyEdit(m: Mutant, e: Edit, text: string): string {
  const n = text.split(e.search).length - 1;
  if (n !== 1)
    throw new Error(
      `mutant ${m.name}: the search string occurs ${n} times in ${e.file} (must be exactly once); ` +
        `update the mutant to the current code: ${JSON.stringify(e.search)}`,
    );
  return text.replace(e.search, () => e.replace);
}

/** CI's plan (seeds.ts), its parts interleaved round robin: a run of each part in turn. */
export function interleavedPlan(): SimRun[] {
  const parts = Array.from({ length: CI_PARTS }, (_, k) => ciPart(k));
  const out: SimRun[] = [];
  for (let i = 0; i < Math.max(...parts.map((p) => p.length)); i++)
    for (const p of parts) if (i < p.length) out.push(p[i] as SimRun);
  return out;
}

interface Outcome {
  /** Runs made (the failing one included). */
  runs: number;
  failed: { run: SimRun; invariant: string; message: string } | null;
  cpuSeconds: number;
}

/** Worker: runs the runs of `file` in order in this copy, stops at the first failing one; prints an Outcome. */
async function worker(file: string): Promise<void> {
  const { runSeed } = await import('./sim.js');
  const runs = JSON.parse(fs.readFileSync(file, 'utf8')) as SimRun[];
  const cpu0 = process.cpuUsage();
  const cpu = (): number => {
    const u = process.cpuUsage(cpu0);
    return (u.user + u.system) / 1e6;
  };
  let i = 0;
  for (const run of runs) {
    i++;
    const r = await runSeed({ ...run });
    if (!r.ok) {
      const v = r.violations[0];
      const out: Outcome = {
        runs: i,
        failed: { run, invariant: v?.invariant ?? '?', message: v?.message ?? '' },
        cpuSeconds: cpu(),
      };
      console.log(JSON.stringify(out));
      return;
    }
    if (i % 100 === 0) process.stderr.write(`  ${path.basename(process.cwd())}: ${i}/${runs.length} runs held\n`);
  }
  console.log(JSON.stringify({ runs: i, failed: null, cpuSeconds: cpu() } satisfies Outcome));
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SELF = fileURLToPath(import.meta.url);

/** A copy of HEAD's tracked files with node_modules linked and the edits applied; runs `runs` there. */
async function runCopy(label: string, edits: { m: Mutant; e: Edit }[], runs: SimRun[], keep: boolean) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `noderotation-mutant-${label}-`));
  try {
    execSync(`git -C ${JSON.stringify(ROOT)} archive --format=tar HEAD | tar -x -C ${JSON.stringify(dir)}`);
    fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(dir, 'node_modules'));
    // This script as it is now (it may be newer than HEAD's) is the copy's worker.
    fs.copyFileSync(SELF, path.join(dir, 'test/sim/mutants.ts'));
    for (const { m, e } of edits) {
      const f = path.join(dir, e.file);
      fs.writeFileSync(f, applyEdit(m, e, fs.readFileSync(f, 'utf8')));
    }
    fs.writeFileSync(path.join(dir, 'runs.json'), JSON.stringify(runs));
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/sim/mutants.ts', '--worker', 'runs.json'], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${label}: worker exited ${code}`))));
    });
    return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Outcome;
  } finally {
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `jobs` at most `n` at a time. */
async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array<T>(jobs.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await (jobs[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, lane));
  return out;
}

const faultsOf = (r: SimRun): string =>
  r.faults.length === 0 ? 'none' : `${r.faults.join(',')} (${r.faultMinutes ?? 30} min)`;
const cell = (s: string): string => s.replaceAll('|', '\\|');

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      worker: { type: 'string' },
      only: { type: 'string' },
      seeds: { type: 'string' },
      'no-sanity': { type: 'boolean', default: false },
      /** The unmodified copy alone, over the whole plan (or --seeds N of it): does CI's plan hold at HEAD? */
      baseline: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
  });
  if (values.worker) return worker(values.worker);
  const names = values.only?.split(',').filter(Boolean);
  const unknown = names?.filter((n) => !MUTANTS.some((m) => m.name === n)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown mutants: ${unknown.join(', ')}`);
  const chosen = values.baseline ? [] : MUTANTS.filter((m) => !names || names.includes(m.name));
  // Every edit must apply to HEAD before anything runs.
  for (const m of chosen)
    for (const e of m.edits)
      applyEdit(m, e, execFileSync('git', ['-C', ROOT, 'show', `HEAD:${e.file}`], { encoding: 'utf8' }));
  const plan = interleavedPlan().slice(0, values.seeds ? Number(values.seeds) : undefined);
  const head = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  console.log(`${chosen.length} mutants of ${head}, each over CI's plan interleaved (${plan.length} runs), 2 at once`);
  const started = performance.now();
  const results = await pool(
    chosen.map((m) => async () => {
      const o = await runCopy(
        m.name,
        m.edits.map((e) => ({ m, e })),
        plan,
        values.keep,
      );
      const f = o.failed;
      console.log(
        `${m.name}: ${f ? `caught after ${o.runs} runs (seed ${f.run.seed}, ${f.invariant})` : 'SURVIVED'}` +
          ` in ${o.cpuSeconds.toFixed(0)} CPU-s`,
      );
      return { m, o };
    }),
    2,
  );
  const longest = Math.max(0, ...results.filter((r) => r.o.failed).map((r) => r.o.runs));
  let sanity: Outcome | null = null;
  const upTo = values.baseline ? plan.length : longest;
  if (!values['no-sanity'] && upTo > 0) {
    sanity = await runCopy('unmodified', [], plan.slice(0, upTo), values.keep);
    console.log(
      `unmodified: ${sanity.failed ? `FAILED at seed ${sanity.failed.run.seed}` : `held ${sanity.runs} runs`}`,
    );
  }
  const wall = (performance.now() - started) / 1000;
  console.log('\n| mutant | bug | caught | runs | seed | faults | invariant violated | CPU s |');
  console.log('|---|---|---|---:|---:|---|---|---:|');
  for (const { m, o } of results) {
    const f = o.failed;
    const files = [...new Set(m.edits.map((e) => e.file))].join(', ');
    console.log(
      `| \`${m.name}\` | ${cell(m.bug)} (${files}) | ${f ? 'yes' : '**no**'} | ${o.runs} | ` +
        `${f ? f.run.seed : '–'} | ${f ? faultsOf(f.run) : '–'} | ` +
        `${f ? cell(`${f.invariant}: ${f.message.slice(0, 140)}`) : '–'} | ${o.cpuSeconds.toFixed(0)} |`,
    );
  }
  const sane = sanity === null ? 'not re-run' : sanity.failed ? `FAILED (${sanity.failed.invariant})` : 'held';
  console.log(
    `\nunmodified copy over the first ${upTo} runs: ${sane}` +
      `${sanity ? ` (${sanity.cpuSeconds.toFixed(0)} CPU-s)` : ''}; ${wall.toFixed(0)} s wall in all`,
  );
  const survived = results.filter((r) => !r.o.failed).map((r) => r.m.name);
  if (survived.length > 0) console.log(`survived the budget: ${survived.join(', ')}`);
  process.exit(survived.length > 0 || sanity?.failed ? 1 : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) await main();
