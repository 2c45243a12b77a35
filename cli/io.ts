// The CLI's file reading: -f takes files, directories (their *.yaml/*.yml/*.json, sorted) or - for stdin.
// Every read is bounded: a file is refused before it is opened when it is not a regular file (a FIFO would
// block the open, /dev/zero would never end), and at most the cap plus one byte is ever read, so an input
// that lies about its size (/proc files, a file still growing) cannot load more than that either.
import * as nodeFs from 'node:fs';
import { join } from 'node:path';

export class UsageError extends Error {}

/** Input that cannot be read: one line per problem, exit 2, no usage text (the flags were fine). */
export class InputFileError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
  }
}

export interface InputFile {
  name: string;
  text: string;
}

/** 10 MiB: a thousand-node `kubectl get nodeclaims -o yaml` is about 3 MiB. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** 50 MiB over all inputs of one command. */
export const MAX_TOTAL_BYTES = 50 * 1024 * 1024;

/** Files over all -f: a directory of a million empty files is refused, not read. */
export const MAX_FILES = 10_000;

/** The part of node:fs the reader uses, so tests can give errno values a root test run cannot provoke. */
export type FileSystem = Pick<
  typeof nodeFs,
  'lstatSync' | 'statSync' | 'openSync' | 'fstatSync' | 'readSync' | 'closeSync' | 'readdirSync' | 'readlinkSync'
>;

export interface ReadOptions {
  /** Reads standard input, at most `limit` bytes (a longer input returns more than `limit`). */
  stdin: (limit: number) => Buffer | string;
  /** Where notes about skipped directory entries go (stderr). */
  note: (line: string) => void;
  /** For commands that read exactly one file (simulate): a directory is refused. */
  single?: boolean;
  /** -R: a directory's sub-directories are read too (kubectl's --recursive); without it each is noted. */
  recursive?: boolean;
  fs?: FileSystem;
  maxFileBytes?: number;
  maxTotalBytes?: number;
}

const MIB = 1024 * 1024;

/** 10485760 → "10 MiB", 1536 → "1536 bytes": sizes in messages the way the caps are documented. */
export function formatBytes(n: number): string {
  return n >= MIB && n % MIB === 0 ? `${n / MIB} MiB` : `${n} bytes`;
}

const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many levels of symbolic links (a symbolic link loop)',
  ENAMETOOLONG: 'the path is too long',
  EISDIR: 'is a directory',
  EIO: 'input/output error',
  EMFILE: 'too many open files',
  ENXIO: 'no such device or address (a socket or a device without a reader)',
};

function errnoText(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return ERRNO_TEXT[code] ?? `cannot be read (${code})`;
  return `cannot be read (${(err as Error).message})`;
}

/** What a non-regular file is, for the message that refuses it. */
function kindOf(stat: nodeFs.Stats): string {
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isDirectory()) return 'a directory';
  return 'not a regular file';
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decode(bytes: Buffer): string | null {
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Where the first byte is that does not start a well-formed UTF-8 sequence, for the message. Only locates:
 * TextDecoder decides validity (overlong forms and surrogates it refuses may be located past them).
 */
function firstInvalidByte(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const c = bytes[i] as number;
    const follow =
      c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (follow < 0) return i;
    for (let k = 1; k <= follow; k++) if (i + k >= bytes.length || ((bytes[i + k] as number) & 0xc0) !== 0x80) return i;
    i += follow + 1;
  }
  return i;
}

/** A whole file or stdin as text, or why not: too large, or not UTF-8. */
function textOf(label: string, bytes: Buffer, limit: number): string {
  if (bytes.length > limit)
    throw new InputFileError([`${label}: larger than ${formatBytes(limit)}, the limit per input; split it into files`]);
  const text = decode(bytes);
  if (text === null) {
    const at = firstInvalidByte(bytes);
    throw new InputFileError([
      `${label}: not UTF-8 text (an invalid byte near offset ${at}); YAML and JSON inputs must be UTF-8`,
    ]);
  }
  return text;
}

/** Reads at most limit + 1 bytes from an open descriptor. */
function readBounded(fs: FileSystem, fd: number, limit: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total <= limit) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, limit + 1 - total));
    const n = fs.readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

/** Opened for reading with O_NONBLOCK, so neither a FIFO without a writer nor a device can block the open. */
function openNonBlocking(fs: FileSystem, path: string, label: string): number {
  try {
    return fs.openSync(path, nodeFs.constants.O_RDONLY | nodeFs.constants.O_NONBLOCK);
  } catch (err) {
    throw new InputFileError([`${label}: ${errnoText(err)}`]);
  }
}

/**
 * Reads one regular file. Opened with O_NONBLOCK and checked again with fstat, so a path that became a FIFO
 * after the stat cannot block the open or the read.
 */
function readRegular(fs: FileSystem, path: string, label: string, limit: number): string {
  const fd = openNonBlocking(fs, path, label);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new InputFileError([`${label}: ${kindOf(stat)}; pass a regular file`]);
    if (stat.size > limit)
      throw new InputFileError([
        `${label}: ${stat.size} bytes, larger than ${formatBytes(limit)}, the limit per input; split it into files`,
      ]);
    let bytes: Buffer;
    try {
      bytes = readBounded(fs, fd, limit);
    } catch (err) {
      throw new InputFileError([`${label}: ${errnoText(err)}`]);
    }
    return textOf(label, bytes, limit);
  } finally {
    fs.closeSync(fd);
  }
}

/** stat through links, with what went wrong named: a loop, a dangling link, a missing file. */
function statFollowing(fs: FileSystem, path: string, label: string): nodeFs.Stats {
  let link: nodeFs.Stats;
  try {
    link = fs.lstatSync(path);
  } catch (err) {
    throw new InputFileError([`${label}: ${errnoText(err)}`]);
  }
  if (!link.isSymbolicLink()) return link;
  try {
    return fs.statSync(path);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') {
      let target = '?';
      try {
        target = fs.readlinkSync(path, 'utf8');
      } catch {
        // The target is only for the message.
      }
      throw new InputFileError([`${label}: a dangling symbolic link (to ${target}, which does not exist)`]);
    }
    throw new InputFileError([`${label}: ${errnoText(err)}`]);
  }
}

const INPUT_NAME = /\.(ya?ml|json)$/;

/**
 * The *.yaml, *.yml and *.json files of a directory, sorted, as kubectl reads them; other kinds of entry under
 * those names are skipped with a note. A sub-directory is read with -R (each directory once, so a link back up
 * cannot loop) and otherwise noted, so nothing under the directory is skipped without a word.
 */
function readDirectory(
  fs: FileSystem,
  dir: string,
  read: (path: string, label: string) => void,
  note: (line: string) => void,
  recursive: { seen: Set<string> } | null,
): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    throw new InputFileError([`-f ${dir}: ${errnoText(err)}`]);
  }
  let skipped = 0;
  const skip = (line: string): void => {
    if (++skipped <= MAX_NOTES) note(line);
  };
  for (const name of names.sort()) {
    const path = join(dir, name);
    // Among other names only a directory matters (for -R, or its note); nothing else there is read or fails.
    const input = INPUT_NAME.test(name);
    const stat = input ? statFollowing(fs, path, `-f ${dir}: ${name}`) : directoryOrNull(fs, path);
    if (stat === null) continue;
    if (stat.isDirectory()) {
      if (!recursive) skip(`note: ${path}: a sub-directory; skipped (-R reads sub-directories too)`);
      else if (!recursive.seen.has(`${stat.dev}:${stat.ino}`)) {
        recursive.seen.add(`${stat.dev}:${stat.ino}`);
        readDirectory(fs, path, read, note, recursive);
      }
      continue;
    }
    if (!stat.isFile()) {
      skip(`note: ${path}: ${kindOf(stat)}, not a file; skipped`);
      continue;
    }
    read(path, path);
  }
  if (skipped > MAX_NOTES) note(`note: ${dir}: ${skipped - MAX_NOTES} more entries skipped`);
}

/** `path`'s stat (through links) when it is a directory; null when it is anything else or cannot be read. */
function directoryOrNull(fs: FileSystem, path: string): nodeFs.Stats | null {
  try {
    const stat = fs.statSync(path);
    return stat.isDirectory() ? stat : null;
  } catch {
    return null;
  }
}

/** Notes printed per kind of note; the rest are counted. */
export const MAX_NOTES = 20;

/**
 * Every input named by -f, as text. Throws UsageError when there is none, and InputFileError (every problem,
 * one line each) when one cannot be read.
 */
export function readInputs(paths: readonly string[], options: ReadOptions): InputFile[] {
  if (paths.length === 0)
    throw new UsageError('no input: pass one or more -f FILE (a file, a directory, or - for standard input)');
  const fs = options.fs ?? nodeFs;
  const maxFile = options.maxFileBytes ?? MAX_FILE_BYTES;
  const maxTotal = options.maxTotalBytes ?? MAX_TOTAL_BYTES;
  const out: InputFile[] = [];
  const problems: string[] = [];
  let total = 0;
  const add = (name: string, text: string): void => {
    if (out.length >= MAX_FILES)
      throw new InputFileError([`${name}: more than ${MAX_FILES} input files; pass fewer files at a time`]);
    total += Buffer.byteLength(text);
    if (total > maxTotal)
      throw new InputFileError([
        `${name}: the inputs together are larger than ${formatBytes(maxTotal)}, the limit over all -f; ` +
          'pass fewer files at a time',
      ]);
    out.push({ name, text });
  };
  const readFile = (path: string, label: string): void => add(path, readRegular(fs, path, label, maxFile));
  let stdinRead = false;
  for (const path of paths) {
    try {
      if (path === '-') {
        if (stdinRead) throw new InputFileError(['-f -: standard input given twice; it can be read only once']);
        stdinRead = true;
        const raw = options.stdin(maxFile);
        const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw;
        add('(stdin)', textOf('-f - (standard input)', bytes, maxFile));
        continue;
      }
      if (path === '') throw new InputFileError(['-f "": an empty path; name a file, a directory or -']);
      const stat = statFollowing(fs, path, `-f ${path}`);
      if (stat.isDirectory()) {
        if (options.single)
          throw new InputFileError([`-f ${path}: a directory; this command reads one file (or - for standard input)`]);
        const seen = new Set([`${stat.dev}:${stat.ino}`]);
        readDirectory(fs, path, readFile, options.note, options.recursive ? { seen } : null);
      } else if (stat.isFile()) {
        readFile(path, `-f ${path}`);
      } else if (stat.isFIFO()) {
        // A pipe named on the command line: process substitution, -f <(kubectl get nodepools -o yaml).
        add(path, readPipe(fs, path, `-f ${path}`, maxFile));
      } else {
        throw new InputFileError([`-f ${path}: ${kindOf(stat)}; pass a regular file, a directory, a pipe or -`]);
      }
    } catch (err) {
      if (!(err instanceof InputFileError)) throw err;
      problems.push(...err.lines);
      if (total > maxTotal || out.length >= MAX_FILES) break;
    }
  }
  if (problems.length > 0) throw new InputFileError(problems);
  return out;
}

/**
 * Standard input, at most limit + 1 bytes. A pipe set non-blocking by someone else answers EAGAIN while it is
 * empty; the read waits briefly and tries again rather than failing.
 */
export function readStdinBounded(limit: number, fs: FileSystem = nodeFs): Buffer {
  return readStream(fs, 0, limit, '-f - (standard input)');
}

/** A pipe's bytes until its writer closes it, at most limit + 1; EAGAIN (nothing written yet) waits 10 ms. */
function readStream(fs: FileSystem, fd: number, limit: number, label: string): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (total <= limit) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, limit + 1 - total));
    let n: number;
    try {
      n = fs.readSync(fd, chunk, 0, chunk.length, null);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 10);
        continue;
      }
      if (code === 'EOF') break;
      throw new InputFileError([`${label}: ${errnoText(err)}`]);
    }
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

/**
 * A named pipe (a FIFO, or /dev/fd/N of a process substitution), read as standard input is: bounded, and opened
 * without blocking, so a pipe nobody writes to reads as empty and is refused, never a hang.
 */
function readPipe(fs: FileSystem, path: string, label: string, limit: number): string {
  const fd = openNonBlocking(fs, path, label);
  try {
    const bytes = readStream(fs, fd, limit, label);
    if (bytes.length === 0)
      throw new InputFileError([`${label}: a pipe that nothing was written to; start its writer first`]);
    return textOf(label, bytes, limit);
  } finally {
    fs.closeSync(fd);
  }
}
