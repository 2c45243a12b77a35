// The time zone names Go's time.LoadLocation accepts when the system has no tz database: the entries of
// $(go env GOROOT)/lib/time/zoneinfo.zip (the reference controller runs in a distroless image, which is
// exactly that case). Reading the zip needs only its central directory: names, no decompression.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GoZoneInfo {
  /** The IANA tz data release Go bundles, e.g. "2025c" (DATA= in lib/time/update.bash). */
  version: string;
  /** Every entry name of zoneinfo.zip, sorted. */
  names: string[];
  /** The offsets below run from 1970 until the start of this year. */
  offsetsUntilYear: number;
  /**
   * Each name's UTC offsets over [1970, offsetsUntilYear) as Go's time package computes them (scripts/tzdata):
   * [offset in seconds at 1970-01-01T00:00Z, then pairs of (transition in Unix seconds, offset from then on)].
   */
  offsets: Record<string, number[]>;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;

/** The file names stored in a zip archive, from its central directory. */
export function zipEntryNames(zip: Buffer): string[] {
  let eocd = -1;
  // The end record is 22 bytes plus a comment of at most 65535 bytes, so it is found near the end.
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65535); i--) {
    if (zip.readUInt32LE(i) === END_OF_CENTRAL_DIRECTORY) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip archive: no end-of-central-directory record');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let k = 0; k < count; k++) {
    if (zip.readUInt32LE(at) !== CENTRAL_FILE_HEADER) throw new Error(`zip central directory is corrupt at ${at}`);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    names.push(zip.toString('utf8', at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return names;
}

function goRoot(): string {
  try {
    return execFileSync('go', ['env', 'GOROOT'], {
      encoding: 'utf8',
      env: { ...process.env, GOTOOLCHAIN: 'local' },
    }).trim();
  } catch (err) {
    throw new Error(
      "the time zone list is generated from Go's tz database, and `go env GOROOT` failed " +
        `(${(err as Error).message.split('\n')[0]}); install Go (see docs/cluster.md) and put it on PATH`,
    );
  }
}

export function readGoZoneInfo(): GoZoneInfo {
  const dir = join(goRoot(), 'lib', 'time');
  const names = zipEntryNames(readFileSync(join(dir, 'zoneinfo.zip')))
    .filter((n) => !n.endsWith('/'))
    .sort();
  const version = /^DATA=(\S+)$/m.exec(readFileSync(join(dir, 'update.bash'), 'utf8'))?.[1];
  if (!version) throw new Error(`${join(dir, 'update.bash')} names no DATA= tz release`);
  return {
    version,
    names,
    offsetsUntilYear: OFFSETS_UNTIL_YEAR,
    offsets: goOffsets(join(dir, 'zoneinfo.zip'), names),
  };
}

/**
 * The offset tables end here: 75 years past today cover every expireAfter, horizon and forecast in use; an instant
 * after it (or before 1970) is read through Intl instead (src/schedule/zone.ts).
 */
const OFFSETS_UNTIL_YEAR = 2101;

/** Runs scripts/tzdata (Go's time package over the same zoneinfo.zip) for the offsets of every name. */
function goOffsets(zip: string, names: string[]): Record<string, number[]> {
  const out = execFileSync('go', ['run', '.', String(OFFSETS_UNTIL_YEAR)], {
    cwd: join(import.meta.dirname, 'tzdata'),
    input: names.join('\n'),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    // ZONEINFO: the zip, never the system's tz database, which time.LoadLocation would otherwise read first.
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod', ZONEINFO: zip },
  });
  return JSON.parse(out) as Record<string, number[]>;
}
