// File-system side of generation: read schemas/, and compare or write the generated files.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { JsonSchema } from '../src/schema-tools/deref.js';
import type { SchemaFiles } from './generate-lib.js';

export const ROOT = join(import.meta.dirname, '..');

export function readSchemaFiles(root = ROOT): SchemaFiles {
  const dir = join(root, 'schemas');
  const files = new Map<string, JsonSchema>();
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.schema.json')) {
        const rel = relative(dir, full).split('\\').join('/');
        try {
          files.set(rel, JSON.parse(readFileSync(full, 'utf8')) as JsonSchema);
        } catch (err) {
          throw new Error(`schemas/${rel}: ${(err as Error).message}`);
        }
      }
    }
  };
  walk(dir);
  return files;
}
