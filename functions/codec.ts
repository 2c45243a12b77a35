// A fast binary codec for the generated protobuf-es messages, driven by their descriptors.
//
// Why: RunFunction messages are mostly google.protobuf.Struct (every resource is one), i.e. thousands of
// tiny nested Value messages. protobuf-es's reflective toBinary spends ~25 ms encoding the 140 KiB response
// for 100 NodePools; this codec writes each message once into one buffer (~3 ms, less when memoised
// policies' bytes are reused) and turns Structs into JSON directly, only when they are read. Correctness is defined by
// protobuf-es itself: codec.test.ts
// checks that encode() gives byte-identical output to toBinary() and decode() the same messages as
// fromBinary(), on the function's real traffic and on generated edge cases. Field numbers, types and
// presence all come from the generated descriptors; nothing here names a RunFunction field.
import {
  create,
  protoInt64,
  ScalarType,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type Message,
} from '@bufbuild/protobuf';
import { WireType } from '@bufbuild/protobuf/wire';
import { FeatureSet_FieldPresence } from '@bufbuild/protobuf/wkt';

const STRUCT = 'google.protobuf.Struct';
/** protobuf-es's default recursion limit: deeper input is rejected, not a stack overflow. */
const MAX_DEPTH = 100;
const utf8 = new TextEncoder();

type Any = Record<string, unknown>;

/**
 * Bytes that are not a valid message of the expected type. `path` names the field where decoding failed
 * (outermost first, e.g. observed.composite.resource["spec"]), so the caller can tell the sender what to fix.
 */
export class CodecError extends Error {
  readonly path: string[] = [];
  constructor(readonly problem: string) {
    super(problem);
  }

  /** "<path>: <problem>", the path in the message's own field names (proto names; Struct keys in brackets). */
  describe(): string {
    // A path through 50 nested objects is shortened to its two ends.
    const parts = this.path.length > 12 ? [...this.path.slice(0, 6), '…', ...this.path.slice(-3)] : this.path;
    const path = parts.map((p, i) => (p.startsWith('[') || p === '…' || i === 0 ? p : `.${p}`)).join('');
    return path === '' ? this.problem : `${path}: ${this.problem}`;
  }
}

/**
 * Runs fn; a CodecError thrown inside gets the segment prepended to its path (innermost is added first).
 * The segment is computed only on failure: this wraps every Struct entry, the hot path of decoding.
 */
function within<T>(segment: () => string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof CodecError) err.path.unshift(segment());
    throw err;
  }
}

class Writer {
  buf: Uint8Array;
  pos = 0;
  private view: DataView;

  constructor(capacity = 4096) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  varint(v: number): void {
    this.ensure(5);
    while (v > 0x7f) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** Signed 32-bit values are sign-extended to 10 bytes, as the protobuf spec (and protobuf-es) do. */
  int32(v: number): void {
    if (v >= 0) this.varint(v);
    else this.varint64(protoInt64.enc(v));
  }

  varint64({ lo, hi }: { lo: number; hi: number }): void {
    this.ensure(10);
    let l = lo >>> 0;
    let h = hi >>> 0;
    while (h > 0 || l > 0x7f) {
      this.buf[this.pos++] = (l & 0x7f) | 0x80;
      l = ((l >>> 7) | (h << 25)) >>> 0;
      h >>>= 7;
    }
    this.buf[this.pos++] = l;
  }

  tag(no: number, wire: WireType): void {
    this.varint((no << 3) | wire);
  }

  double(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  float(v: number): void {
    this.ensure(4);
    this.view.setFloat32(this.pos, v, true);
    this.pos += 4;
  }

  fixed32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  string(s: string): void {
    // Most strings here are short ASCII (keys, names, durations): copy them byte by byte.
    if (s.length < 0x80) {
      this.ensure(1 + s.length * 3);
      const start = this.pos;
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        this.buf[start + 1 + i] = c;
      }
      if (i === s.length) {
        this.buf[start] = s.length;
        this.pos = start + 1 + s.length;
        return;
      }
    }
    // At most 3 bytes per UTF-16 unit; write after a worst-case length prefix, then close the gap.
    const max = s.length * 3;
    const prefix = max < 0x80 ? 1 : max < 0x4000 ? 2 : 5;
    this.ensure(prefix + max);
    const written = utf8.encodeInto(s, this.buf.subarray(this.pos + prefix)).written;
    this.finishDelimited(this.pos, prefix, written);
  }

  /** Length-delimited content written by fn, its length prefix patched in afterwards. */
  delimited(fn: () => void): void {
    this.ensure(1);
    const start = this.pos;
    this.pos += 1;
    fn();
    this.finishDelimited(start, 1, this.pos - start - 1);
  }

  private finishDelimited(start: number, reserved: number, length: number): void {
    const size = length < 0x80 ? 1 : length < 0x4000 ? 2 : length < 0x200000 ? 3 : length < 0x10000000 ? 4 : 5;
    if (size !== reserved) {
      this.ensure(size - reserved);
      this.buf.copyWithin(start + size, start + reserved, start + reserved + length);
    }
    this.pos = start;
    this.varint(length);
    this.pos = start + size + length;
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

// ---- encoding -------------------------------------------------------------------------------------------

const sorted = new WeakMap<DescMessage, DescField[]>();
const sortedFields = (desc: DescMessage): DescField[] => {
  let hit = sorted.get(desc);
  if (!hit) {
    hit = [...desc.fields].sort((a, b) => a.number - b.number);
    sorted.set(desc, hit);
  }
  return hit;
};

function isSet(field: DescField, msg: Any): boolean {
  if (field.oneof) return (msg[field.oneof.localName] as { case?: string }).case === field.localName;
  const v = msg[field.localName];
  switch (field.fieldKind) {
    case 'list':
      return (v as unknown[]).length > 0;
    case 'map':
      return Object.keys(v as object).length > 0;
    case 'message':
      return v !== undefined;
    default:
      if (field.presence !== FeatureSet_FieldPresence.IMPLICIT) return v !== undefined;
      return !(
        v === 0 ||
        v === '' ||
        v === false ||
        v === 0n ||
        (v instanceof Uint8Array && v.length === 0) ||
        v === undefined
      );
  }
}

function fieldValue(field: DescField, msg: Any): unknown {
  return field.oneof ? (msg[field.oneof.localName] as { value: unknown }).value : msg[field.localName];
}

function writeScalar(w: Writer, type: ScalarType, v: unknown): void {
  switch (type) {
    case ScalarType.STRING:
      return w.string(v as string);
    case ScalarType.BOOL:
      return w.varint(v ? 1 : 0);
    case ScalarType.DOUBLE:
      return w.double(v as number);
    case ScalarType.FLOAT:
      return w.float(v as number);
    case ScalarType.INT32:
      return w.int32(v as number);
    case ScalarType.UINT32:
      return w.varint((v as number) >>> 0);
    case ScalarType.FIXED32:
      return w.fixed32(v as number);
    case ScalarType.BYTES:
      return w.bytes(v as Uint8Array);
    case ScalarType.INT64:
    case ScalarType.UINT64:
      return w.varint64(protoInt64.enc(v as bigint));
    default:
      throw new Error(`codec: scalar type ${ScalarType[type]} is not used by these protos`);
  }
}

const wireOf = (type: ScalarType): WireType =>
  type === ScalarType.STRING || type === ScalarType.BYTES
    ? WireType.LengthDelimited
    : type === ScalarType.DOUBLE
      ? WireType.Bit64
      : type === ScalarType.FLOAT || type === ScalarType.FIXED32
        ? WireType.Bit32
        : WireType.Varint;

function writeJsonValue(w: Writer, v: JsonValue | undefined): void {
  // google.protobuf.Value: null_value = 1, number_value = 2, string_value = 3, bool_value = 4,
  // struct_value = 5, list_value = 6 (struct.proto; fixed since 2008, and checked against protobuf-es).
  if (v === null) {
    w.tag(1, WireType.Varint);
    w.varint(0);
  } else if (typeof v === 'number') {
    w.tag(2, WireType.Bit64);
    w.double(v);
  } else if (typeof v === 'string') {
    w.tag(3, WireType.LengthDelimited);
    w.string(v);
  } else if (typeof v === 'boolean') {
    w.tag(4, WireType.Varint);
    w.varint(v ? 1 : 0);
  } else if (Array.isArray(v)) {
    w.tag(6, WireType.LengthDelimited);
    w.delimited(() => {
      for (const item of v) {
        w.tag(1, WireType.LengthDelimited);
        w.delimited(() => writeJsonValue(w, item));
      }
    });
  } else if (typeof v === 'object') {
    w.tag(5, WireType.LengthDelimited);
    w.delimited(() => writeStruct(w, v));
  }
  // undefined: a Value with no kind, an empty message (what protobuf-es writes too).
}

/**
 * Encoded bytes of Structs known never to change (frozen): a memoised RotationPolicy is sent on every call
 * of a steady-state poll, and copying its bytes is much cheaper than encoding it again.
 */
const frozenBytes = new WeakMap<JsonObject, Uint8Array>();
const frozen = new WeakSet<object>();

/** Deep-freezes a JSON object and lets the encoder reuse its bytes from then on. Returns it. */
export function freezeStruct<T extends object>(obj: T): T {
  const freeze = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
    for (const child of Object.values(v)) freeze(child);
    Object.freeze(v);
  };
  freeze(obj);
  frozen.add(obj);
  return obj;
}

function writeStruct(w: Writer, obj: JsonObject): void {
  if (frozen.has(obj)) {
    let bytes = frozenBytes.get(obj);
    if (!bytes) {
      const own = new Writer();
      writeStructFields(own, obj);
      bytes = own.finish().slice();
      frozenBytes.set(obj, bytes);
    }
    w.ensure(bytes.length);
    w.buf.set(bytes, w.pos);
    w.pos += bytes.length;
    return;
  }
  writeStructFields(w, obj);
}

function writeStructFields(w: Writer, obj: JsonObject): void {
  for (const key in obj) {
    w.tag(1, WireType.LengthDelimited);
    w.delimited(() => {
      w.tag(1, WireType.LengthDelimited);
      w.string(key);
      w.tag(2, WireType.LengthDelimited);
      w.delimited(() => writeJsonValue(w, obj[key]));
    });
  }
}

function writeMessageValue(w: Writer, desc: DescMessage, v: unknown): void {
  if (desc.typeName === STRUCT) writeStruct(w, v as JsonObject);
  else writeMessage(w, desc, v as Any);
}

function writeMessage(w: Writer, desc: DescMessage, msg: Any): void {
  for (const field of sortedFields(desc)) {
    if (!isSet(field, msg)) continue;
    const v = fieldValue(field, msg);
    switch (field.fieldKind) {
      case 'scalar':
        w.tag(field.number, wireOf(field.scalar));
        writeScalar(w, field.scalar, v);
        break;
      case 'enum':
        w.tag(field.number, WireType.Varint);
        w.int32(v as number);
        break;
      case 'message':
        w.tag(field.number, WireType.LengthDelimited);
        w.delimited(() => writeMessageValue(w, field.message, v));
        break;
      case 'list':
        if (field.listKind === 'message') {
          for (const item of v as unknown[]) {
            w.tag(field.number, WireType.LengthDelimited);
            w.delimited(() => writeMessageValue(w, field.message, item));
          }
        } else {
          const type = field.listKind === 'enum' ? ScalarType.INT32 : field.scalar;
          if (field.packed) {
            w.tag(field.number, WireType.LengthDelimited);
            w.delimited(() => {
              for (const item of v as unknown[]) writeScalar(w, type, item);
            });
          } else {
            for (const item of v as unknown[]) {
              w.tag(field.number, wireOf(type));
              writeScalar(w, type, item);
            }
          }
        }
        break;
      case 'map': {
        const keyType = field.mapKey;
        for (const [key, value] of Object.entries(v as Any)) {
          w.tag(field.number, WireType.LengthDelimited);
          w.delimited(() => {
            w.tag(1, wireOf(keyType));
            writeScalar(
              w,
              keyType,
              keyType === ScalarType.BOOL ? key === 'true' : keyType === ScalarType.STRING ? key : Number(key),
            );
            if (field.mapKind === 'message') {
              w.tag(2, WireType.LengthDelimited);
              w.delimited(() => writeMessageValue(w, field.message, value));
            } else {
              const type = field.mapKind === 'enum' ? ScalarType.INT32 : field.scalar;
              w.tag(2, wireOf(type));
              writeScalar(w, type, value);
            }
          });
        }
        break;
      }
    }
  }
  for (const u of (msg.$unknown as { no: number; wireType: WireType; data: Uint8Array }[] | undefined) ?? []) {
    w.tag(u.no, u.wireType);
    w.ensure(u.data.length);
    w.buf.set(u.data, w.pos);
    w.pos += u.data.length;
  }
}

/** The last encoded size per message type: a buffer that size up front saves growing it call after call. */
const sizeHints = new WeakMap<DescMessage, number>();

/** Same bytes as protobuf-es toBinary(desc, message). */
export function encode<T extends Message>(desc: DescMessage, message: T): Uint8Array {
  const w = new Writer(sizeHints.get(desc) ?? 256);
  writeMessage(w, desc, message);
  sizeHints.set(desc, Math.max(256, Math.ceil(w.pos * 1.1)));
  return w.finish();
}

// ---- decoding -------------------------------------------------------------------------------------------

/** The subset of protobuf-es's Reader used here, without its per-tag array and with short ASCII fast. */
class Reader {
  pos = 0;
  private readonly view: DataView;
  private readonly text: Buffer;
  constructor(readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  private fail(): never {
    throw new CodecError('premature end of input (the message is cut short or a length is wrong)');
  }

  uint32(): number {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.buf.length) this.fail();
      const b = this.buf[this.pos++] as number;
      if (shift < 28) result |= (b & 0x7f) << shift;
      else result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return result >>> 0;
    }
    // Longer varints (negative int32 are 10 bytes): the low 32 bits are what counts.
    while ((this.buf[this.pos++] as number) >= 0x80) if (this.pos >= this.buf.length) this.fail();
    return result >>> 0;
  }

  int32(): number {
    return this.uint32() | 0;
  }

  /** A field tag; field number 0 is illegal (as protobuf-es and every other decoder say). */
  tag(): number {
    const t = this.uint32();
    if (t >>> 3 === 0) throw new CodecError(`illegal tag: field number 0 (wire type ${t & 7})`);
    return t;
  }

  varint64(): [number, number] {
    let lo = 0;
    let hi = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= this.buf.length) this.fail();
      const b = this.buf[this.pos++] as number;
      if (shift < 28) lo |= (b & 0x7f) << shift;
      else if (shift === 28) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >> 4;
      } else hi |= (b & 0x7f) << (shift - 32);
      if (b < 0x80) break;
    }
    return [lo, hi];
  }

  double(): number {
    if (this.pos + 8 > this.buf.length) this.fail();
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  float(): number {
    if (this.pos + 4 > this.buf.length) this.fail();
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  fixed32(): number {
    if (this.pos + 4 > this.buf.length) this.fail();
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  bytes(): Uint8Array {
    const len = this.uint32();
    const end = this.pos + len;
    if (end > this.buf.length) this.fail();
    const out = this.buf.slice(this.pos, end);
    this.pos = end;
    return out;
  }

  string(): string {
    const len = this.uint32();
    const end = this.pos + len;
    if (end > this.buf.length) this.fail();
    // Node's native UTF-8 slice: much cheaper than TextDecoder for the many short strings (keys, names);
    // both replace malformed sequences with U+FFFD as the WHATWG decoder does.
    const s = this.text.toString('utf8', this.pos, end);
    this.pos = end;
    return s;
  }

  /** Skips a field, returning its raw bytes (kept as an unknown field). */
  skip(wire: WireType): Uint8Array {
    const start = this.pos;
    this.pass(wire);
    return this.buf.slice(start, this.pos);
  }

  /** Moves past a field, checking its bounds, without copying it. */
  pass(wire: WireType): void {
    switch (wire) {
      case WireType.Varint:
        while ((this.buf[this.pos++] as number) >= 0x80) if (this.pos >= this.buf.length) this.fail();
        break;
      case WireType.Bit64:
        this.pos += 8;
        break;
      case WireType.Bit32:
        this.pos += 4;
        break;
      case WireType.LengthDelimited: {
        const len = this.uint32();
        this.pos += len;
        break;
      }
      default:
        throw new CodecError(`wire type ${wire} is not allowed here (groups are not used by these protos)`);
    }
    if (this.pos > this.buf.length) this.fail();
  }
}

const byNumber = new WeakMap<DescMessage, Map<number, DescField>>();
const fieldMap = (desc: DescMessage): Map<number, DescField> => {
  let hit = byNumber.get(desc);
  if (!hit) {
    hit = new Map(desc.fields.map((f) => [f.number, f]));
    byNumber.set(desc, hit);
  }
  return hit;
};

function readScalar(r: Reader, type: ScalarType): unknown {
  switch (type) {
    case ScalarType.STRING:
      return r.string();
    case ScalarType.BOOL:
      return r.uint32() !== 0;
    case ScalarType.DOUBLE:
      return r.double();
    case ScalarType.FLOAT:
      return r.float();
    case ScalarType.INT32:
      return r.int32();
    case ScalarType.UINT32:
      return r.uint32();
    case ScalarType.FIXED32:
      return r.fixed32();
    case ScalarType.BYTES:
      return r.bytes();
    case ScalarType.INT64:
      return protoInt64.dec(...r.varint64());
    case ScalarType.UINT64:
      return protoInt64.uDec(...r.varint64());
    default:
      throw new Error(`codec: scalar type ${ScalarType[type]} is not used by these protos`);
  }
}

const scalarDefault = (type: ScalarType): unknown =>
  type === ScalarType.STRING
    ? ''
    : type === ScalarType.BOOL
      ? false
      : type === ScalarType.BYTES
        ? new Uint8Array(0)
        : type === ScalarType.INT64 || type === ScalarType.UINT64
          ? protoInt64.zero
          : 0;

const tooDeep = (): CodecError =>
  new CodecError(`nesting deeper than ${MAX_DEPTH} levels (the limit protobuf-es and this function apply)`);

/** Reads a length prefix; the end it gives must lie within the bytes. */
function delimitedEnd(r: Reader): number {
  const len = r.uint32();
  const end = r.pos + len;
  if (end > r.buf.length)
    throw new CodecError('premature end of input (the message is cut short or a length is wrong)');
  return end;
}

/** A nested message must end exactly where its length prefix said; a field running past it is malformed. */
function closes(r: Reader, end: number): void {
  if (r.pos !== end) throw new CodecError('a field runs past the end of its enclosing message');
}

/** `[“key”]`, the path segment of a Struct entry (keys can hold any character, hence JSON quoting). */
const keySegment = (key: string): string => `[${JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key)}]`;

function readJsonValue(r: Reader, end: number, depth: number): JsonValue {
  if (depth > MAX_DEPTH) throw tooDeep();
  let value: JsonValue = null; // a Value with no kind reads as null, as in protobuf-es
  while (r.pos < end) {
    const noTag = r.tag();
    const no = noTag >>> 3;
    const wire = (noTag & 7) as WireType;
    if (no === 1 && wire === WireType.Varint) {
      r.int32();
      value = null;
    } else if (no === 2 && wire === WireType.Bit64) value = r.double();
    else if (no === 3 && wire === WireType.LengthDelimited) value = r.string();
    else if (no === 4 && wire === WireType.Varint) value = r.uint32() !== 0;
    else if (no === 5 && wire === WireType.LengthDelimited) {
      const structEnd = delimitedEnd(r);
      value = readStruct(r, structEnd, depth + 1, {});
      closes(r, structEnd);
    } else if (no === 6 && wire === WireType.LengthDelimited) {
      const listEnd = delimitedEnd(r);
      const list: JsonValue[] = [];
      while (r.pos < listEnd) {
        const lnoTag = r.tag();
        const lno = lnoTag >>> 3;
        const lwire = (lnoTag & 7) as WireType;
        if (lno === 1 && lwire === WireType.LengthDelimited) {
          const itemEnd = delimitedEnd(r);
          try {
            list.push(readJsonValue(r, itemEnd, depth + 2));
          } catch (err) {
            if (err instanceof CodecError) err.path.unshift(`[${list.length}]`);
            throw err;
          }
          closes(r, itemEnd);
        } else r.pass(lwire);
      }
      closes(r, listEnd);
      value = list;
    } else r.pass(wire);
  }
  return value;
}

/** Merges into `into` (a repeated Struct field merges, like any message). */
function readStruct(r: Reader, end: number, depth: number, into: JsonObject): JsonObject {
  if (depth > MAX_DEPTH) throw tooDeep();
  while (r.pos < end) {
    const noTag = r.tag();
    const no = noTag >>> 3;
    const wire = (noTag & 7) as WireType;
    if (no !== 1 || wire !== WireType.LengthDelimited) {
      r.pass(wire);
      continue;
    }
    const entryEnd = delimitedEnd(r);
    let key = '';
    let value: JsonValue = null;
    while (r.pos < entryEnd) {
      const enoTag = r.tag();
      const eno = enoTag >>> 3;
      const ewire = (enoTag & 7) as WireType;
      if (eno === 1 && ewire === WireType.LengthDelimited) key = r.string();
      else if (eno === 2 && ewire === WireType.LengthDelimited) {
        const valueEnd = delimitedEnd(r);
        try {
          value = readJsonValue(r, valueEnd, depth + 1);
        } catch (err) {
          if (err instanceof CodecError) err.path.unshift(keySegment(key));
          throw err;
        }
        closes(r, valueEnd);
      } else r.pass(ewire);
    }
    closes(r, entryEnd);
    // A plain assignment of "__proto__" would replace the object's prototype (protobuf-es drops such a key
    // that way); JSON allows the key, so keep it as ordinary data.
    if (key === '__proto__')
      Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
    else into[key] = value;
  }
  return into;
}

/**
 * Checks a Struct's wire format without building it, with readStruct's depth accounting: tags, lengths and
 * nesting. A lazily decoded Struct is scanned when its message is decoded, so reading it later cannot fail:
 * malformed bytes are refused up front, as a whole request, never half-way through handling it.
 */
function scanStruct(r: Reader, end: number, depth: number): void {
  if (depth > MAX_DEPTH) throw tooDeep();
  while (r.pos < end) {
    const noTag = r.tag();
    const wire = (noTag & 7) as WireType;
    if (noTag >>> 3 !== 1 || wire !== WireType.LengthDelimited) {
      r.pass(wire);
      continue;
    }
    const entryEnd = delimitedEnd(r);
    let keyStart = -1;
    while (r.pos < entryEnd) {
      const enoTag = r.tag();
      const eno = enoTag >>> 3;
      const ewire = (enoTag & 7) as WireType;
      if (eno === 1 && ewire === WireType.LengthDelimited) {
        keyStart = r.pos;
        r.pass(ewire);
      } else if (eno === 2 && ewire === WireType.LengthDelimited) {
        const valueEnd = delimitedEnd(r);
        try {
          scanValue(r, valueEnd, depth + 1);
        } catch (err) {
          // The key is decoded only to name the field in the error.
          if (err instanceof CodecError) err.path.unshift(keySegment(keyAt(r, keyStart)));
          throw err;
        }
        closes(r, valueEnd);
      } else r.pass(ewire);
    }
    closes(r, entryEnd);
  }
}

function keyAt(r: Reader, start: number): string {
  if (start < 0) return '';
  const at = r.pos;
  r.pos = start;
  const key = r.string();
  r.pos = at;
  return key;
}

/** scanStruct's counterpart for google.protobuf.Value, with readJsonValue's depth accounting. */
function scanValue(r: Reader, end: number, depth: number): void {
  if (depth > MAX_DEPTH) throw tooDeep();
  while (r.pos < end) {
    const noTag = r.tag();
    const no = noTag >>> 3;
    const wire = (noTag & 7) as WireType;
    if (no === 5 && wire === WireType.LengthDelimited) {
      const structEnd = delimitedEnd(r);
      scanStruct(r, structEnd, depth + 1);
      closes(r, structEnd);
    } else if (no === 6 && wire === WireType.LengthDelimited) {
      const listEnd = delimitedEnd(r);
      for (let i = 0; r.pos < listEnd; i++) {
        const lnoTag = r.tag();
        const lwire = (lnoTag & 7) as WireType;
        if (lnoTag >>> 3 === 1 && lwire === WireType.LengthDelimited) {
          const itemEnd = delimitedEnd(r);
          try {
            scanValue(r, itemEnd, depth + 2);
          } catch (err) {
            if (err instanceof CodecError) err.path.unshift(`[${i}]`);
            throw err;
          }
          closes(r, itemEnd);
        } else r.pass(lwire);
      }
      closes(r, listEnd);
    } else if (no === 2 && wire === WireType.Bit64) r.double();
    else r.pass(wire); // varints (null, bool), strings and unknown fields: skip checks their bounds
  }
}

/**
 * A singular Struct field decoded on first access. Crossplane sends every composed resource it observes;
 * the function reads none of them, so their JSON is never built. Reading the property (as toBinary, equals
 * or any caller does) decodes it once and makes it an ordinary data property. The bytes are scanned now,
 * so that first access cannot throw.
 */
function lazyStruct(r: Reader, msg: Any, name: string, depth: number): void {
  const end = delimitedEnd(r);
  const start = r.pos;
  scanStruct(r, end, depth + 1);
  closes(r, end);
  const bytes = r.buf.subarray(start, end);
  const settle = (value: unknown): void => {
    Object.defineProperty(msg, name, { value, writable: true, enumerable: true, configurable: true });
  };
  Object.defineProperty(msg, name, {
    enumerable: true,
    configurable: true,
    get() {
      const value = readStruct(new Reader(bytes), bytes.length, depth + 1, {});
      settle(value);
      return value;
    },
    set: settle,
  });
}

function readMessageValue(r: Reader, desc: DescMessage, depth: number, existing: unknown): unknown {
  const end = delimitedEnd(r);
  const value =
    desc.typeName === STRUCT
      ? readStruct(r, end, depth + 1, (existing as JsonObject | undefined) ?? {})
      : readMessage(r, desc, end, depth + 1, existing as Any | undefined);
  closes(r, end);
  return value;
}

function readMessage(r: Reader, desc: DescMessage, end: number, depth: number, into?: Any): Any {
  if (depth > MAX_DEPTH) throw tooDeep();
  const msg = into ?? create(desc);
  const fields = fieldMap(desc);
  while (r.pos < end) {
    const noTag = r.tag();
    const no = noTag >>> 3;
    const wire = (noTag & 7) as WireType;
    const field = fields.get(no);
    if (!field) {
      const data = r.skip(wire);
      ((msg.$unknown ??= []) as unknown[]).push({ no, wireType: wire, data });
      continue;
    }
    const expected = expectedWire(field, wire);
    if (wire !== expected) {
      const err = new CodecError(`wire type ${WireType[wire] ?? wire}, but the field is ${WireType[expected]}`);
      err.path.push(field.name);
      throw err;
    }
    readField(r, field, wire, msg, depth);
  }
  return msg;
}

/** The wire type a field must arrive in; a packed or unpacked repeated scalar may use either form. */
function expectedWire(field: DescField, wire: WireType): WireType {
  switch (field.fieldKind) {
    case 'scalar':
      return wireOf(field.scalar);
    case 'enum':
      return WireType.Varint;
    case 'list': {
      if (field.listKind === 'message') return WireType.LengthDelimited;
      const single = field.listKind === 'enum' ? WireType.Varint : wireOf(field.scalar);
      return wire === WireType.LengthDelimited ? WireType.LengthDelimited : single;
    }
    default:
      return WireType.LengthDelimited;
  }
}

function readField(r: Reader, field: DescField, wire: WireType, msg: Any, depth: number): void {
  switch (field.fieldKind) {
    case 'scalar':
    case 'enum': {
      const v = within(
        () => field.name,
        () => readScalar(r, field.fieldKind === 'enum' ? ScalarType.INT32 : field.scalar),
      );
      if (field.oneof) msg[field.oneof.localName] = { case: field.localName, value: v };
      else msg[field.localName] = v;
      return;
    }
    case 'message': {
      if (!field.oneof && field.message.typeName === STRUCT && msg[field.localName] === undefined) {
        within(
          () => field.name,
          () => lazyStruct(r, msg, field.localName, depth),
        );
        return;
      }
      const current = field.oneof
        ? (msg[field.oneof.localName] as { case?: string; value?: unknown }).case === field.localName
          ? (msg[field.oneof.localName] as { value: unknown }).value
          : undefined
        : msg[field.localName];
      const v = within(
        () => field.name,
        () => readMessageValue(r, field.message, depth, current),
      );
      if (field.oneof) msg[field.oneof.localName] = { case: field.localName, value: v };
      else msg[field.localName] = v;
      return;
    }
    case 'list': {
      const list = msg[field.localName] as unknown[];
      within(
        () => `${field.name}[${list.length}]`,
        () => {
          if (field.listKind === 'message') {
            list.push(readMessageValue(r, field.message, depth, undefined));
            return;
          }
          const type = field.listKind === 'enum' ? ScalarType.INT32 : field.scalar;
          if (wire === WireType.LengthDelimited && type !== ScalarType.STRING && type !== ScalarType.BYTES) {
            const listEnd = delimitedEnd(r);
            while (r.pos < listEnd) list.push(readScalar(r, type));
            closes(r, listEnd);
          } else list.push(readScalar(r, type));
        },
      );
      return;
    }
    case 'map':
      within(
        () => field.name,
        () => readMapEntry(r, field, msg, depth),
      );
      return;
  }
}

function readMapEntry(r: Reader, field: DescField & { fieldKind: 'map' }, msg: Any, depth: number): void {
  const entryEnd = delimitedEnd(r);
  const valueType = field.mapKind === 'enum' ? ScalarType.INT32 : field.mapKind === 'scalar' ? field.scalar : null;
  let key: unknown = scalarDefault(field.mapKey);
  let value: unknown;
  while (r.pos < entryEnd) {
    const enoTag = r.tag();
    const eno = enoTag >>> 3;
    const ewire = (enoTag & 7) as WireType;
    if (eno === 1) key = readScalar(r, field.mapKey);
    else if (eno === 2)
      value = within(
        () => keySegment(String(key)),
        () =>
          valueType === null
            ? readMessageValue(r, field.message as DescMessage, depth, undefined)
            : readScalar(r, valueType),
      );
    else r.pass(ewire);
  }
  closes(r, entryEnd);
  if (value === undefined) {
    value =
      valueType !== null
        ? scalarDefault(valueType)
        : field.message?.typeName === STRUCT
          ? {}
          : create(field.message as DescMessage);
  }
  (msg[field.localName] as Any)[String(key)] = value;
}

/** Same message as protobuf-es fromBinary(desc, bytes); malformed bytes throw a CodecError naming the field. */
export function decode<T extends Message>(desc: DescMessage, bytes: Uint8Array): T {
  const r = new Reader(bytes);
  return readMessage(r, desc, bytes.length, 0) as unknown as T;
}
