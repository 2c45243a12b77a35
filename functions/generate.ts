// Regenerates the function's generated files (ts-proto code, the XRD, the input CRD). Run from the
// repository root: `node --import tsx functions/generate.ts` (part of `npm run generate`).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readSchemaFiles } from '../scripts/generate-io.js';
import { generatePackageFiles, generateProtoCode, ROOT } from './codegen.js';

const proto = generateProtoCode();
// ts-proto owns functions/generated/ entirely: clear it so a removed .proto leaves no orphan behind.
rmSync(join(ROOT, 'functions', 'generated'), { recursive: true, force: true });
for (const [path, content] of [...proto, ...generatePackageFiles(readSchemaFiles())]) {
  const full = join(ROOT, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, content);
  console.log(`wrote ${path}`);
}
