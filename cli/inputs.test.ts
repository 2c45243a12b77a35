// Every kind of bad input is refused with exit 2 and a message naming the input, the field and what is allowed;
// none crashes, hangs or reads without bound. Real files, FIFOs, sockets and links in a temp dir; errno values a
// root test run cannot provoke (EACCES) come from a wrapped fs.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../test/support/cli-harness.js';
import { InputFileError, MAX_FILE_BYTES, readInputs, type FileSystem } from './io.js';

const ROOT = join(import.meta.dirname, '..');
const ex = (f: string): string => join(ROOT, 'examples', f);

let dir = '';
let socketServer: Server | undefined;
const at = (name: string): string => join(dir, name);

const POLICY = `apiVersion: noderotation.io/v1alpha1
kind: RotationPolicy
metadata: {name: p1}
spec:
  nodePools: [general]
  maintenanceWindows: [{timezone: UTC, days: [Mon, Tue, Wed, Thu, Fri, Sat, Sun], start: "02:00", end: "06:00"}]
`;
const NODEPOOL = (name: string): string => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: ${name}}
spec: {template: {spec: {expireAfter: 336h, terminationGracePeriod: 1h}}}
`;

/** Nine levels of nine aliases: 9^9 strings if expanded ("billion laughs"). */
function aliasBomb(): string {
  let text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  let prev = 'a';
  for (const c of 'bcdefghi') {
    text += `${c}: &${c} [${Array.from({ length: 9 }, () => `*${prev}`).join(',')}]\n`;
    prev = c;
  }
  return text;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(join(tmpdir(), 'noderotation-inputs-'));
  execFileSync('mkfifo', [at('fifo.yaml')]);
  fs.symlinkSync(at('loop-b'), at('loop-a'));
  fs.symlinkSync(at('loop-a'), at('loop-b'));
  fs.symlinkSync(at('nowhere.yaml'), at('dangling.yaml'));
  fs.writeFileSync(at('policy.yaml'), POLICY);
  fs.writeFileSync(at('nodepool.yaml'), NODEPOOL('general'));
  fs.writeFileSync(at('bad-utf8.yaml'), Buffer.from([0x61, 0x3a, 0x20, 0x62, 0xff, 0xfe, 0x0a]));
  fs.writeFileSync(at('bomb.yaml'), aliasBomb());
  fs.writeFileSync(at('self.yaml'), 'a: &a [*a]\n');
  // 50 MB of broken documents, sparse: the size alone refuses it, nothing is read.
  fs.writeFileSync(at('broken-50mb.yaml'), 'a: b: c\n---\n');
  fs.truncateSync(at('broken-50mb.yaml'), 50 * 1024 * 1024);
  fs.mkdirSync(at('dir'));
  fs.writeFileSync(at('dir/a-policy.yaml'), POLICY);
  fs.writeFileSync(at('dir/b-nodepool.yaml'), NODEPOOL('general'));
  execFileSync('mkfifo', [at('dir/c-pipe.yaml')]);
  fs.mkdirSync(at('dir/d-subdir.yaml'));
  fs.writeFileSync(at('dir/notes.txt'), 'not read: wrong extension');
  fs.mkdirSync(at('dir/more'));
  fs.writeFileSync(at('dir/more/nodepool.yaml'), NODEPOOL('batch'));
  fs.symlinkSync(at('dir'), at('dir/more/up'));
  // Not an input name: neither read nor a reason to fail, even as a link to nothing.
  fs.symlinkSync(at('nowhere'), at('dir/zz-dangling'));
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer?.listen(at('socket.yaml'), resolve));
});

afterAll(async () => {
  await new Promise<void>((resolve) => (socketServer ? socketServer.close(() => resolve()) : resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('file inputs: refused with exit 2 and one line naming the file', () => {
  const cases: { reason: string; args: () => string[]; err: RegExp }[] = [
    {
      reason: 'a missing file',
      args: () => ['-f', at('missing.yaml')],
      err: /missing\.yaml: no such file or directory$/m,
    },
    {
      reason: 'a FIFO given directly that nothing writes to: refused without blocking on its open or read',
      args: () => ['-f', at('fifo.yaml')],
      err: /fifo\.yaml: a pipe that nothing was written to; start its writer first$/m,
    },
    { reason: '/dev/zero, never read', args: () => ['-f', '/dev/zero'], err: /-f \/dev\/zero: a character device/ },
    {
      reason: '/dev/urandom, never read',
      args: () => ['-f', '/dev/urandom'],
      err: /-f \/dev\/urandom: a character dev/,
    },
    { reason: 'a socket', args: () => ['-f', at('socket.yaml')], err: /socket\.yaml: a socket; pass a regular file/ },
    {
      reason: 'a symbolic link loop',
      args: () => ['-f', at('loop-a')],
      err: /loop-a: too many levels of symbolic links \(a symbolic link loop\)/,
    },
    {
      reason: 'a dangling symbolic link, with its target',
      args: () => ['-f', at('dangling.yaml')],
      err: /dangling\.yaml: a dangling symbolic link \(to .*nowhere\.yaml, which does not exist\)/,
    },
    {
      reason: 'a path through a file',
      args: () => ['-f', at('policy.yaml/x.yaml')],
      err: /x\.yaml: a part of the path is not a directory/,
    },
    {
      reason: 'invalid UTF-8, with where',
      args: () => ['-f', at('bad-utf8.yaml')],
      err: /bad-utf8\.yaml: not UTF-8 text \(an invalid byte near offset 4\)/,
    },
    {
      reason: 'a 50 MB file of broken documents, by its size, with the numbers',
      args: () => ['-f', at('broken-50mb.yaml')],
      err: /broken-50mb\.yaml: 52428800 bytes, larger than 10 MiB, the limit per input/,
    },
    { reason: 'an empty path', args: () => ['-f', ''], err: /-f "": an empty path/ },
    {
      reason: 'standard input given twice',
      args: () => ['-f', '-', '-f', '-'],
      err: /-f -: standard input given twice/,
    },
  ];
  for (const c of cases)
    it(`${c.reason}`, async () => {
      for (const command of ['validate', 'explain', 'render']) {
        const r = await cli([command, ...c.args()]);
        expect(r.code, r.err).toBe(2);
        expect(r.out).toBe('');
        expect(r.err).toMatch(/^invalid input:\n/);
        expect(r.err).toMatch(c.err);
        expect(r.err.split('\n').filter((l) => l !== '')).toHaveLength(2);
      }
    });

  it('reports every unreadable -f, one line each', async () => {
    const r = await cli(['validate', '-f', at('fifo.yaml'), '-f', at('missing.yaml'), '-f', '/dev/zero']);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(4);
  });

  it('inside a -f directory, skips what is not a file with a note, and reads the rest', async () => {
    const r = await cli(['validate', '-f', at('dir')]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`note: ${at('dir/c-pipe.yaml')}: a FIFO (named pipe), not a file; skipped`);
    expect(r.err).toContain(
      `note: ${at('dir/d-subdir.yaml')}: a sub-directory; skipped (-R reads sub-directories too)`,
    );
    expect(r.err).toContain(`note: ${at('dir/more')}: a sub-directory; skipped (-R reads sub-directories too)`);
    expect(r.out).toContain('1 NodePool checked');
  });

  it('with -R reads the sub-directories too, each once (a link back up does not loop)', async () => {
    const r = await cli(['validate', '-R', '-f', at('dir')]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toContain('sub-directory');
    expect(r.out).toContain('2 NodePools checked');
  });

  it('reads a pipe named on the command line, as process substitution gives one: -f <(cat FILE)', () => {
    const out = execFileSync(
      'bash',
      [
        '-c',
        `node --import tsx cli/from-source.ts validate -f <(cat "$1") -f <(cat "$2")`,
        'x',
        at('policy.yaml'),
        at('nodepool.yaml'),
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(out).toContain('1 NodePool checked: 0 fatal');
  });

  it('simulate refuses a directory: it reads one scenario file', async () => {
    const r = await cli(['simulate', '-f', at('dir')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`-f ${at('dir')}: a directory; this command reads one file (or - for standard input)`);
  });

  it('caps standard input, naming it', async () => {
    const r = await cli(['validate', '-f', '-'], Buffer.alloc(MAX_FILE_BYTES + 1, 0x20));
    expect(r.code).toBe(2);
    expect(r.err).toContain('-f - (standard input): larger than 10 MiB, the limit per input');
  });
});

/** node:fs with some calls replaced, and the bytes read counted. */
function wrappedFs(overrides: Partial<FileSystem>): { fs: FileSystem; bytesRead: () => number } {
  let bytes = 0;
  const base: FileSystem = {
    lstatSync: fs.lstatSync,
    statSync: fs.statSync,
    openSync: fs.openSync,
    fstatSync: fs.fstatSync,
    readSync: fs.readSync,
    closeSync: fs.closeSync,
    readdirSync: fs.readdirSync,
    readlinkSync: fs.readlinkSync,
  };
  const merged = { ...base, ...overrides };
  const readSync = merged.readSync;
  return {
    fs: {
      ...merged,
      readSync: ((...args: Parameters<typeof fs.readSync>) => {
        const n = (readSync as (...a: Parameters<typeof fs.readSync>) => number)(...args);
        bytes += n;
        return n;
      }) as FileSystem['readSync'],
    },
    bytesRead: () => bytes,
  };
}

const errno = (code: string): (() => never) => {
  return () => {
    throw Object.assign(new Error(`${code}: mocked`), { code });
  };
};

describe('readInputs with errno values root cannot provoke, and inputs that lie about their size', () => {
  const stdin = (): string => '';
  const note = (): void => {};
  const cases: { reason: string; path: () => string; fs: Partial<FileSystem>; message: RegExp }[] = [
    {
      reason: 'an unreadable file (EACCES on open)',
      path: () => at('policy.yaml'),
      fs: { openSync: errno('EACCES') },
      message: /policy\.yaml: permission denied$/,
    },
    {
      reason: 'an unreadable directory (EACCES on readdir)',
      path: () => at('dir'),
      fs: { readdirSync: errno('EACCES') },
      message: /-f .*dir: permission denied$/,
    },
    {
      reason: 'a path under a directory that cannot be searched (EACCES on lstat)',
      path: () => at('dir/a-policy.yaml'),
      fs: { lstatSync: errno('EACCES') },
      message: /a-policy\.yaml: permission denied$/,
    },
    {
      reason: 'a read failing with EIO',
      path: () => at('policy.yaml'),
      fs: { readSync: errno('EIO') },
      message: /policy\.yaml: input\/output error$/,
    },
    {
      reason: 'a regular file that became a FIFO between stat and open (fstat says so)',
      path: () => at('policy.yaml'),
      fs: { fstatSync: (() => fs.statSync(at('fifo.yaml'))) as unknown as FileSystem['fstatSync'] },
      message: /policy\.yaml: a FIFO \(named pipe\); pass a regular file$/,
    },
  ];
  for (const c of cases)
    it(c.reason, () => {
      const w = wrappedFs(c.fs);
      let thrown: unknown;
      try {
        readInputs([c.path()], { stdin, note, fs: w.fs });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(InputFileError);
      expect((thrown as InputFileError).lines).toHaveLength(1);
      expect((thrown as InputFileError).lines[0]).toMatch(c.message);
    });

  it('a file that says size 0 but never ends (like /proc files) is read to the cap plus one byte, no further', () => {
    const w = wrappedFs({
      fstatSync: (() => ({ ...fs.statSync(at('policy.yaml')), isFile: () => true, size: 0 })) as never,
      readSync: ((_fd: number, buffer: Buffer) => buffer.fill(0x61).length) as FileSystem['readSync'],
    });
    expect(() => readInputs([at('policy.yaml')], { stdin, note, fs: w.fs, maxFileBytes: 1000 })).toThrow(
      /policy\.yaml: larger than 1000 bytes, the limit per input/,
    );
    expect(w.bytesRead()).toBe(1001);
  });

  it('caps the inputs together', () => {
    expect(() => readInputs([at('policy.yaml'), at('nodepool.yaml')], { stdin, note, maxTotalBytes: 250 })).toThrow(
      /nodepool\.yaml: the inputs together are larger than 250 bytes, the limit over all -f/,
    );
  });
});

describe('YAML: refused within its caps, output bounded', () => {
  const cases: { reason: string; input: () => string; err: RegExp; maxErrLength?: number }[] = [
    {
      reason: 'an alias bomb (billion laughs)',
      input: aliasBomb,
      err: /\(stdin\), document 1: \(document\): found YAML aliases that expand more than 100 times \(an alias bomb/,
    },
    {
      reason: 'an alias that contains itself',
      input: () => 'a: &a [*a]\n',
      err: /found objects and lists nested more than 100 deep \(an alias that contains itself\?\)/,
    },
    {
      reason: 'an unknown alias',
      input: () => 'a: *nothing\n',
      err: /document 1: \(document\): found YAML that cannot be read \(Unresolved alias.*nothing\); allowed: valid/,
    },
    {
      reason: 'flow collections nested 5000 deep',
      input: () => '['.repeat(5000),
      err: /found \[ or \{ nested more than 100 deep; allowed: at most 100 levels of flow collections/,
    },
    {
      reason: 'block mappings nested 150 deep',
      input: () => Array.from({ length: 150 }, (_, i) => `${' '.repeat(i)}a:`).join('\n'),
      err: /found objects and lists nested more than 100 deep/,
    },
    {
      reason: 'a duplicate key',
      input: () => `${NODEPOOL('general')}kind: NodePool\n`,
      err: /found YAML that does not parse \(line 5, column 1: Map keys must be unique/,
    },
    {
      reason: '20,000 broken documents: the first 5 errors, the document cap, and a count',
      input: () => 'a: b: c\n---\n'.repeat(20_000),
      err: /document 5: .*line 9, column 4[^]*found more than 10000 documents[^]*more YAML errors, not shown/,
      maxErrLength: 2000,
    },
    {
      reason: 'one document with an error on every line',
      input: () => `x:\n${'  - [a, b\n  }: ]\n'.repeat(5000)}`,
      err: /more YAML errors, not shown/,
      maxErrLength: 2000,
    },
    {
      reason: '2000 documents that are not objects: the first 100 problems and a count',
      input: () => '--- 1\n'.repeat(2000),
      err: /document 100: \(document\): found a number[^]*… and 1900 more problems, not shown/,
      maxErrLength: 20_000,
    },
    {
      reason: 'a document that is a string (not echoed back)',
      input: () => `"${'x'.repeat(5000)}"\n`,
      err: /document 1: \(document\): found a string of 5000 characters; allowed: a Kubernetes object/,
      maxErrLength: 400,
    },
    {
      reason: 'NodePool labels that are not a map',
      input: () => NODEPOOL('general').replace('{name: general}', '{name: general, labels: 5}'),
      err: /\(NodePool\/general\): metadata\.labels: found 5; allowed: a value of type object \(a map of label/,
    },
    {
      reason: 'a NodePool name of 100,000 characters (echoed cut to 80 characters)',
      input: () => NODEPOOL('x'.repeat(100_000)),
      err: /metadata\.name: found "x{70,80}…"; allowed: at most 253 character\(s\)/,
    },
    {
      reason: 'a NodeClaim creationTimestamp that is not a time',
      input: () => 'apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: c, creationTimestamp: yesterday}\n',
      err: /\(NodeClaim\/c\): metadata\.creationTimestamp: found "yesterday"; allowed: an RFC 3339 time/,
    },
    {
      reason: 'a NodeClaim spec that is not an object',
      input: () => 'apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: c}\nspec: 7\n',
      err: /\(NodeClaim\/c\): spec: found 7; allowed: a value of type object/,
    },
    {
      reason: 'a kind that is not a string',
      input: () => 'apiVersion: v1\nkind: {a: b}\n',
      err: /document 1 \(object\/\?\): kind: found a object; allowed: a Kubernetes object with apiVersion and kind/,
    },
  ];
  for (const c of cases)
    it(c.reason, async () => {
      const r = await cli(['validate', '-f', '-'], c.input());
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(c.err);
      expect(r.err.length).toBeLessThan(c.maxErrLength ?? 1000);
    });
});

describe('objects: what is not ours, and duplicates', () => {
  const cases: { reason: string; command?: string; files: () => string[]; err: () => string }[] = [
    {
      reason: 'a MaintenancePlan of another version',
      command: 'render',
      files: () => [ex('nodepools.yaml'), '-'],
      err: () =>
        '(stdin), document 1 (MaintenancePlan/platform): apiVersion: found noderotation.io/v1beta1 MaintenancePlan; ' +
        'allowed: noderotation.io/v1alpha1 RotationPolicy or MaintenancePlan',
    },
    {
      reason: 'a kind of our group that does not exist',
      files: () => [ex('nodepools.yaml'), '-'],
      err: () => '(stdin), document 1 (RotationPlan/platform): kind: found noderotation.io/v1alpha1 RotationPlan',
    },
    {
      reason: 'a NodePool of Karpenter before 1.0',
      files: () => [at('policy.yaml'), '-'],
      err: () =>
        '(stdin), document 1 (NodePool/platform): apiVersion: found karpenter.sh/v1beta1; allowed: karpenter.sh/v1',
    },
    {
      reason: 'two NodePools of one name in two files, naming both places',
      files: () => [at('policy.yaml'), at('nodepool.yaml'), at('dir')],
      err: () =>
        `${at('dir/b-nodepool.yaml')}, document 1 (NodePool/general): metadata.name: found "general" again: ` +
        `the same NodePool is in ${at('nodepool.yaml')}, document 1; allowed: each NodePool name once`,
    },
    {
      reason: 'two RotationPolicies of one name in one file',
      files: () => [at('nodepool.yaml'), '-'],
      err: () =>
        '(stdin), document 2 (RotationPolicy/p1): metadata.name: found "p1" again: ' +
        'the same RotationPolicy is in (stdin), document 1',
    },
  ];
  const stdinFor: Record<string, string> = {
    'a MaintenancePlan of another version':
      'apiVersion: noderotation.io/v1beta1\nkind: MaintenancePlan\nmetadata: {name: platform}\nspec: {}\n',
    'a kind of our group that does not exist':
      'apiVersion: noderotation.io/v1alpha1\nkind: RotationPlan\nmetadata: {name: platform}\nspec: {}\n',
    'a NodePool of Karpenter before 1.0': NODEPOOL('platform').replace('karpenter.sh/v1', 'karpenter.sh/v1beta1'),
    'two RotationPolicies of one name in one file': `${POLICY}---\n${POLICY}`,
  };
  for (const c of cases)
    it(c.reason, async () => {
      const args = c.files().flatMap((f) => ['-f', f]);
      const r = await cli([c.command ?? 'validate', ...args], stdinFor[c.reason] ?? '');
      expect(r.code, r.err).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain(c.err());
    });

  it('a Scenario given to explain is skipped with a note that names simulate', async () => {
    const r = await cli(['explain', '-f', ex('scenarios/worked-example.yaml'), '-f', at('policy.yaml')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('Scenario (read by noderotation simulate) is not read by noderotation; skipped');
  });
});

describe('flags: unusable values refused before anything is read', () => {
  const cases: { reason: string; args: string[]; err: string }[] = [
    {
      reason: 'a date that does not exist',
      args: ['explain', '--now', '2026-02-30T00:00:00Z'],
      err: '--now 2026-02-30T00:00:00Z: 2026-02 has no day 30',
    },
    {
      reason: 'a date-time without an offset',
      args: ['validate', '--now', '2026-12-01T00:00:00'],
      err: '--now 2026-12-01T00:00:00: not an RFC 3339 date-time with an offset',
    },
    {
      reason: 'a date alone',
      args: ['render', '--now', '2026-12-01'],
      err: 'not an RFC 3339 date-time with an offset',
    },
    {
      reason: 'hour 24',
      args: ['explain', '--now', '2026-12-01T24:00:00Z'],
      err: '24:00:00 is not a time of day',
    },
    { reason: 'month 13', args: ['explain', '--now', '2026-13-01T00:00:00Z'], err: 'month 13 does not exist' },
    {
      reason: 'an offset that does not exist',
      args: ['explain', '--now', '2026-12-01T00:00:00+25:00'],
      err: 'offset +25:00 does not exist',
    },
    { reason: '29 February of a common year', args: ['explain', '--now', '2027-02-29T00:00:00Z'], err: 'no day 29' },
    {
      reason: 'simulate -f twice',
      args: ['simulate', '-f', 'a.yaml', '-f', 'b.yaml'],
      err: 'simulate reads one scenario; -f given 2 times (a.yaml, b.yaml)',
    },
    {
      reason: '-o twice',
      args: ['explain', '-o', 'json', '-o', 'table', '-f', 'x'],
      err: '-o/--output given 2 times (json, table)',
    },
    {
      reason: '--now twice',
      args: ['render', '--now', '2027-01-04T00:00:00Z', '--now', '2027-01-05T00:00:00Z', '-f', 'x'],
      err: '--now given 2 times',
    },
    {
      reason: 'an output simulate has not',
      args: ['simulate', '-o', 'xml', '-f', 'x'],
      err: '-o xml: expected table,',
    },
    {
      reason: 'a positional argument (a file named without -f)',
      args: ['validate', 'file.yaml'],
      err: 'noderotation validate: unexpected argument "file.yaml": name input files with -f FILE',
    },
  ];
  for (const c of cases)
    it(c.reason, async () => {
      const r = await cli(c.args);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain(c.err);
    });

  it('accepts a leap day, an offset and fractional seconds', async () => {
    for (const now of ['2028-02-29T12:00:00Z', '2027-01-04T09:00:00+09:00', '2027-01-04T00:00:00.123456Z']) {
      const r = await cli(['validate', '--now', now, '-f', at('policy.yaml'), '-f', at('nodepool.yaml')]);
      expect(r.code, `${now}: ${r.err}`).toBe(0);
    }
  });
});
