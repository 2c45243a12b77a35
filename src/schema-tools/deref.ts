// Dereferencing for our own schema files. Every file has an absolute `$id` that mirrors its path under
// schemas/, and refs are relative to that id, so resolution is plain URL resolution plus a JSON pointer.
// Sibling keywords of a `$ref` (description, default) refine the referenced schema and win over it.

export type JsonSchema = { [key: string]: unknown };

export type SchemaSet = ReadonlyMap<string, JsonSchema>;

function pointer(doc: JsonSchema, fragment: string, ref: string): JsonSchema {
  if (fragment === '' || fragment === '/') return doc;
  let node: unknown = doc;
  for (const raw of fragment.replace(/^\//, '').split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !(key in node)) {
      throw new Error(`unresolvable $ref ${ref}`);
    }
    node = (node as Record<string, unknown>)[key];
  }
  return node as JsonSchema;
}

function resolve(ref: string, base: string, schemas: SchemaSet): { target: JsonSchema; base: string } {
  const url = new URL(ref, base);
  const fragment = url.hash.replace(/^#/, '');
  url.hash = '';
  const docId = url.toString();
  const doc = schemas.get(docId);
  if (!doc) throw new Error(`$ref ${ref} (from ${base}) names no known schema ${docId}`);
  return { target: pointer(doc, fragment, ref), base: docId };
}

/** Returns a copy of `schema` with every `$ref` replaced by the schema it names. */
export function dereference(schema: JsonSchema, base: string, schemas: SchemaSet, seen: string[] = []): JsonSchema {
  const walk = (node: unknown, nodeBase: string, stack: string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, nodeBase, stack));
    if (typeof node !== 'object' || node === null) return node;
    const obj = node as JsonSchema;
    const ownBase = typeof obj.$id === 'string' ? obj.$id : nodeBase;
    const out: JsonSchema = {};
    if (typeof obj.$ref === 'string') {
      const key = new URL(obj.$ref, ownBase).toString();
      if (stack.includes(key)) throw new Error(`recursive $ref ${obj.$ref} is not supported in CRD schemas`);
      const { target, base: targetBase } = resolve(obj.$ref, ownBase, schemas);
      Object.assign(out, walk(target, targetBase, [...stack, key]) as JsonSchema);
    }
    for (const [key, value] of Object.entries(obj)) {
      // `definitions` are only a store for refs: once refs are inlined they are dropped.
      if (key === '$ref' || key === 'definitions') continue;
      out[key] =
        key === 'enum' || key === 'default' || key === 'x-kubernetes-validations' ? value : walk(value, ownBase, stack);
    }
    return out;
  };
  return walk(schema, base, seen) as JsonSchema;
}
