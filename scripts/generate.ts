// `npm run generate`: regenerate types, embedded schemas, CRDs and editor/kubeconform schemas from schemas/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generateAll } from './generate-lib.js';
import { readSchemaFiles, ROOT } from './generate-io.js';
import { readGoZoneInfo } from './zoneinfo.js';

const generated = await generateAll(readSchemaFiles(), readGoZoneInfo());
for (const [path, content] of generated) {
  const full = join(ROOT, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, content);
  console.log(`wrote ${path}`);
}
